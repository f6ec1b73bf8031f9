"""Runs Spark SQL statements against a Hive Metastore, as a Spark user with Hive support would.

    python3 spark_sql.py HOST:PORT SPARK_WAREHOUSE_DIR "SQL" ["SQL" ...]

Spark (pyspark's wheel, local mode, one core) uses the metastore at thrift://HOST:PORT for every
table and writes managed tables' data files under SPARK_WAREHOUSE_DIR. Each statement's rows are
printed one per line, tab-separated, after a `> SQL` line; Spark's own logging goes to stderr.
"""

import sys

from pyspark.sql import SparkSession


def main():
    address, warehouse, statements = sys.argv[1], sys.argv[2], sys.argv[3:]
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("metacache-hms-test")
        .config("spark.sql.warehouse.dir", warehouse)
        .config("spark.hadoop.hive.metastore.uris", "thrift://" + address)
        .config("spark.sql.catalogImplementation", "hive")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "512m")
        .enableHiveSupport()
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        for sql in statements:
            print("> " + sql, flush=True)
            for row in spark.sql(sql).collect():
                print("\t".join("" if v is None else str(v) for v in row), flush=True)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
