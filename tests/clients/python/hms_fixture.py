"""Writes the Hive Metastore fixture of the HMS tests through the metastore's own Thrift API.

    python3 hms_fixture.py HOST:PORT WAREHOUSE_DIR [PARTITIONS]

Creates, in a real Hive Metastore, database `sales` with
- `orders` (id bigint, amount double, partitioned by dt string) and PARTITIONS partitions
  (default 3), each a directory under WAREHOUSE_DIR holding one data file, and column
  statistics for `id` and `amount`;
- `customers` (id bigint, name string), unpartitioned, with one data file;
and database `web` with no tables. Prints `ok` when done. Idempotent: existing objects are
dropped first.
"""

import os
import sys

from hmsclient import hmsclient
from hmsclient.genthrift.hive_metastore import ttypes as t

PARQUET_IN = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
PARQUET_OUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"


def storage(location, columns):
    return t.StorageDescriptor(
        cols=columns,
        location=location,
        inputFormat=PARQUET_IN,
        outputFormat=PARQUET_OUT,
        compressed=False,
        numBuckets=-1,
        serdeInfo=t.SerDeInfo(name="", serializationLib=PARQUET_SERDE, parameters={}),
        bucketCols=[],
        sortCols=[],
        parameters={},
    )


def data_file(directory, name, size):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as f:
        f.write(b"\0" * size)


def main():
    address, warehouse = sys.argv[1], os.path.abspath(sys.argv[2])
    partitions = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    host, port = address.rsplit(":", 1)
    with hmsclient.HMSClient(host=host, port=int(port)) as client:
        for database in ("sales", "web"):
            if database in client.get_all_databases():
                client.drop_database(database, False, True)
            client.create_database(
                t.Database(
                    name=database,
                    description=database,
                    locationUri="file://%s/%s.db" % (warehouse, database),
                    parameters={},
                )
            )
        orders_dir = "%s/sales.db/orders" % warehouse
        columns = [
            t.FieldSchema(name="id", type="bigint", comment="order id"),
            t.FieldSchema(name="amount", type="double", comment=""),
        ]
        orders = t.Table(
            tableName="orders",
            dbName="sales",
            owner="metacache",
            createTime=0,
            lastAccessTime=0,
            retention=0,
            sd=storage("file://" + orders_dir, columns),
            partitionKeys=[t.FieldSchema(name="dt", type="string", comment="")],
            parameters={"EXTERNAL": "TRUE", "comment": "orders by day"},
            tableType="EXTERNAL_TABLE",
        )
        client.create_table(orders)
        batch = []
        for i in range(partitions):
            day = "2024-%02d-%02d" % (1 + i // 28 % 12, 1 + i % 28) if partitions <= 336 else "d%05d" % i
            directory = "%s/dt=%s" % (orders_dir, day)
            data_file(directory, "part-00000.parquet", 100 + i)
            partition = client.make_partition(orders, [day])
            batch.append(partition)
            if len(batch) == 500:
                client.add_partitions(batch)
                batch = []
        if batch:
            client.add_partitions(batch)
        statistics = t.ColumnStatistics(
            statsDesc=t.ColumnStatisticsDesc(isTblLevel=True, dbName="sales", tableName="orders"),
            statsObj=[
                t.ColumnStatisticsObj(
                    colName="id",
                    colType="bigint",
                    statsData=t.ColumnStatisticsData(
                        longStats=t.LongColumnStatsData(lowValue=1, highValue=999, numNulls=0, numDVs=999)
                    ),
                ),
                t.ColumnStatisticsObj(
                    colName="amount",
                    colType="double",
                    statsData=t.ColumnStatisticsData(
                        doubleStats=t.DoubleColumnStatsData(
                            lowValue=0.5, highValue=99.5, numNulls=3, numDVs=120
                        )
                    ),
                ),
            ],
        )
        client.update_table_column_statistics(statistics)
        customers_dir = "%s/sales.db/customers" % warehouse
        data_file(customers_dir, "part-00000.parquet", 64)
        client.create_table(
            t.Table(
                tableName="customers",
                dbName="sales",
                owner="metacache",
                createTime=0,
                lastAccessTime=0,
                retention=0,
                sd=storage(
                    "file://" + customers_dir,
                    [
                        t.FieldSchema(name="id", type="bigint", comment=""),
                        t.FieldSchema(name="name", type="string", comment=""),
                    ],
                ),
                partitionKeys=[],
                parameters={"EXTERNAL": "TRUE"},
                tableType="EXTERNAL_TABLE",
            )
        )
    print("ok")


if __name__ == "__main__":
    main()
