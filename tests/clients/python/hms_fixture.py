"""Writes the Hive Metastore fixture of the HMS tests through the metastore's own Thrift API.

    python3 hms_fixture.py HOST:PORT WAREHOUSE_DIR [PARTITIONS]
    python3 hms_fixture.py HOST:PORT iceberg DATABASE TABLE METADATA_FILE
    python3 hms_fixture.py HOST:PORT relocate DATABASE TABLE FROM_DIR TO_URL

Creates, in a real Hive Metastore, database `sales` with
- `orders` (id bigint, amount double, partitioned by dt string) and PARTITIONS partitions
  (default 3), each a directory under WAREHOUSE_DIR holding one data file, and column
  statistics for `id` and `amount`;
- `customers` (id bigint, name string), unpartitioned, with one data file;
and database `web` with no tables. Prints `ok` when done. Idempotent: existing objects are
dropped first.

The `relocate` form moves a table and its partitions whose locations are below the local
directory FROM_DIR to the same paths below TO_URL (`s3://bucket/prefix`), as `ALTER TABLE …
SET LOCATION` does after the files were copied: alter_table and alter_partitions, which Hive 2.3
applies without opening the new file system (the metastore of the tests has no S3 client).

The `iceberg` form registers an Iceberg table (written by pyiceberg) the way Iceberg's
HiveCatalog does: an EXTERNAL_TABLE with `table_type=ICEBERG` and `metadata_location` naming
METADATA_FILE under the location the metadata records, columns from its current schema.
"""

import json

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


HIVE_TYPES = {"long": "bigint", "int": "int", "string": "string", "date": "date",
              "double": "double", "float": "float", "boolean": "boolean", "timestamp": "timestamp"}


def register_iceberg(address, database, table, metadata_file):
    with open(metadata_file) as f:
        metadata = json.load(f)
    location = metadata["location"]
    schema = next(s for s in metadata["schemas"] if s["schema-id"] == metadata["current-schema-id"])
    columns = [
        t.FieldSchema(name=field["name"], type=HIVE_TYPES.get(str(field["type"]), "string"), comment="")
        for field in schema["fields"]
    ]
    host, port = address.rsplit(":", 1)
    with hmsclient.HMSClient(host=host, port=int(port)) as client:
        if database not in client.get_all_databases():
            client.create_database(
                t.Database(name=database, description="", locationUri=location.rsplit("/", 1)[0], parameters={})
            )
        if table in client.get_all_tables(database):
            client.drop_table(database, table, False)
        sd = storage(location, columns)
        sd.inputFormat = "org.apache.hadoop.mapred.FileInputFormat"
        sd.outputFormat = "org.apache.hadoop.mapred.FileOutputFormat"
        sd.serdeInfo = t.SerDeInfo(
            name="", serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", parameters={}
        )
        client.create_table(
            t.Table(
                tableName=table,
                dbName=database,
                owner="metacache",
                createTime=0,
                lastAccessTime=0,
                retention=0,
                sd=sd,
                partitionKeys=[],
                parameters={
                    "EXTERNAL": "TRUE",
                    "table_type": "ICEBERG",
                    "metadata_location": "%s/metadata/%s" % (location, os.path.basename(metadata_file)),
                },
                tableType="EXTERNAL_TABLE",
            )
        )
    print("ok")


def moved(location, from_dir, to_url):
    path = "/" + location.split(":", 1)[-1].lstrip("/") if location.startswith("file:") else location
    if not path.startswith(from_dir.rstrip("/") + "/"):
        raise SystemExit("%s is not below %s" % (location, from_dir))
    return to_url.rstrip("/") + path[len(from_dir.rstrip("/")):]


def relocate(address, database, table, from_dir, to_url):
    host, port = address.rsplit(":", 1)
    from_dir = os.path.abspath(from_dir)
    with hmsclient.HMSClient(host=host, port=int(port)) as client:
        tbl = client.get_table(database, table)
        tbl.sd.location = moved(tbl.sd.location, from_dir, to_url)
        client.alter_table(database, table, tbl)
        partitions = client.get_partitions(database, table, -1)
        for partition in partitions:
            partition.sd.location = moved(partition.sd.location, from_dir, to_url)
        if partitions:
            client.alter_partitions(database, table, partitions)
    print("ok")


def main():
    if len(sys.argv) > 2 and sys.argv[2] == "relocate":
        return relocate(*sys.argv[1:2], *sys.argv[3:7])
    if len(sys.argv) > 2 and sys.argv[2] == "iceberg":
        return register_iceberg(sys.argv[1], sys.argv[3], sys.argv[4], sys.argv[5])
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
