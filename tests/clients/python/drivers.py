"""One admin's and one dashboard's session through a real Python MySQL driver (issue 13).

    python3 drivers.py <driver> <mysql port> <fixture warehouse>

<driver>: pymysql | connector-pure | connector-c | sqlalchemy. Prints `OK <driver>` and exits 0
when every step behaves as MySQL would; raises (exit 1, with the step) otherwise. Exit 3 when
the driver is not installed (the Rust test reports SKIPPED).
"""

import sys

DRIVER, PORT, WAREHOUSE = sys.argv[1], int(sys.argv[2]), sys.argv[3]
CATALOG = "drv_" + DRIVER.replace("-", "_")

# The statistics-table queries of docs/troubleshooting.md, in order.
TROUBLESHOOTING = [
    """SELECT fe_host, max_weight, estimated_weight, node_memory_bytes, process_rss_bytes,
              reclaim_request_count, reclaimed_bytes
       FROM information_schema.catalog_meta_cache_nodes""",
    """SELECT fe_host, SUM(estimated_weight) AS estimated_weight,
              SUM(weight_reject_count) AS weight_reject_count
       FROM information_schema.catalog_meta_cache_statistics
       WHERE max_weight >= 0 GROUP BY fe_host ORDER BY fe_host""",
    """SELECT catalog_name, catalog_type, max_weight, estimated_weight, cache_count
       FROM information_schema.catalogs ORDER BY estimated_weight DESC""",
    """SELECT fe_host, catalog_name, SUM(estimated_weight) AS estimated_weight,
              SUM(weight_reject_count) AS weight_reject_count
       FROM information_schema.catalog_meta_cache_statistics
       WHERE max_weight >= 0 GROUP BY fe_host, catalog_name ORDER BY estimated_weight DESC""",
]


def expect(condition, what):
    if not condition:
        raise AssertionError(what)


def connect(database=None):
    """A DB-API connection of the driver under test; `paramstyle` is its placeholder."""
    if DRIVER == "pymysql" or DRIVER == "sqlalchemy":
        import pymysql

        kwargs = {"database": database} if database else {}
        return pymysql.connect(host="127.0.0.1", port=PORT, user="root", password="", **kwargs)
    import mysql.connector

    use_pure = DRIVER == "connector-pure"
    if not use_pure and not mysql.connector.HAVE_CEXT:
        print("SKIPPED: mysql-connector-python has no C extension here")
        sys.exit(3)
    kwargs = {"database": database} if database else {}
    return mysql.connector.connect(
        host="127.0.0.1", port=PORT, user="root", password="", use_pure=use_pure, **kwargs
    )


def rows(conn, sql, params=None, prepared=False):
    if prepared:
        cursor = conn.cursor(prepared=True)
    else:
        cursor = conn.cursor()
    cursor.execute(sql, params) if params is not None else cursor.execute(sql)
    found = [tuple(r) for r in cursor.fetchall()] if cursor.description else []
    cursor.close()
    return found


def session():
    # No database: DATABASE() is NULL, SHOW TABLES is 1046.
    conn = connect()
    expect(rows(conn, "SELECT DATABASE()") == [(None,)], "DATABASE() without a database is NULL")
    try:
        rows(conn, "SHOW TABLES")
        raise AssertionError("SHOW TABLES without a database must fail")
    except AssertionError:
        raise
    except Exception as error:  # the driver's own error class
        expect(error.args[0] == 1046, f"1046 for SHOW TABLES without a database, got {error}")
    expect(rows(conn, "SELECT 1/0") == [(None,)], "1/0 is NULL")
    conn.close()

    # With a database: what a dashboard runs.
    conn = connect("information_schema")
    expect(("catalogs",) in rows(conn, "SHOW TABLES"), "SHOW TABLES lists the system tables")
    for sql in TROUBLESHOOTING:
        rows(conn, sql)

    # DDL, then the error path, then the same connection goes on.
    rows(conn, f"DROP CATALOG IF EXISTS {CATALOG}")
    rows(
        conn,
        f"""CREATE CATALOG {CATALOG} PROPERTIES ("type" = "hms", "warehouse" = "{WAREHOUSE}",
            "meta.cache.max-weight" = "64MB")""",
    )
    expect(("sales",) in rows(conn, f"SHOW DATABASES FROM {CATALOG}"), "the new catalog reads")
    try:
        rows(
            conn,
            f"""ALTER CATALOG {CATALOG} SET PROPERTIES ("meta.cache.hive.file.max-weight" = "1GB")""",
        )
        raise AssertionError("an entry limit above the catalog's must be refused")
    except AssertionError:
        raise
    except Exception as error:
        expect("can not exceed meta.cache.max-weight" in str(error), f"the limit message: {error}")
    expect(rows(conn, "SELECT 1") == [(1,)], "the connection is usable after the error")
    statistics = """SELECT engine_name, entry_name, estimated_weight, max_weight
                    FROM information_schema.catalog_meta_cache_statistics
                    WHERE catalog_name = {} AND max_weight >= 0 ORDER BY estimated_weight DESC"""
    if DRIVER.startswith("connector"):
        # Server-side prepared statements (the binary protocol).
        found = rows(conn, statistics.format("%s"), (CATALOG,), prepared=True)
        expect(len(found) > 0, "a prepared statistics query answers the catalog's caches")
        found = rows(conn, "SELECT ? AS s, ? AS n, ? AS f", ("it's \\ ok", 7, None), prepared=True)
        expect(found == [("it's \\ ok", 7, None)], f"values come back as bound: {found}")
    else:
        found = rows(conn, statistics.format("%s"), (CATALOG,))
        expect(len(found) > 0, "the statistics query answers the catalog's caches")
    rows(conn, f"DROP CATALOG {CATALOG}")
    conn.close()


def sqlalchemy_session():
    import pandas
    import sqlalchemy

    engine = sqlalchemy.create_engine(f"mysql+pymysql://root@127.0.0.1:{PORT}/information_schema")
    inspector = sqlalchemy.inspect(engine)
    expect("information_schema" in inspector.get_schema_names(), "get_schema_names")
    expect("catalog_meta_cache_statistics" in inspector.get_table_names(), "get_table_names")
    columns = [c["name"] for c in inspector.get_columns("catalog_meta_cache_statistics")]
    expect(columns[:4] == ["FE_HOST", "CATALOG_NAME", "ENGINE_NAME", "ENTRY_NAME"], f"{columns}")
    table = sqlalchemy.Table("catalogs", sqlalchemy.MetaData(), autoload_with=engine)
    expect("CATALOG_NAME" in table.columns, "Table(autoload_with=…)")
    frame = pandas.read_sql_table("catalog_meta_cache_nodes", engine)
    expect(len(frame) == 1 and "FE_HOST" in frame.columns, "pandas.read_sql_table")
    frame = pandas.read_sql(
        sqlalchemy.text("SELECT catalog_name, entry_name FROM catalog_meta_cache_statistics"), engine
    )
    expect(list(frame.columns) == ["catalog_name", "entry_name"], "pandas.read_sql")


try:
    if DRIVER == "sqlalchemy":
        import pandas  # noqa: F401
        import sqlalchemy  # noqa: F401
    elif DRIVER == "pymysql":
        import pymysql  # noqa: F401
    else:
        import mysql.connector  # noqa: F401
except ImportError as missing:
    print(f"SKIPPED: {missing}; run scripts/test-deps.sh")
    sys.exit(3)

if DRIVER == "sqlalchemy":
    sqlalchemy_session()
else:
    session()
print(f"OK {DRIVER}")
