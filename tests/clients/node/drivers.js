// One admin's and one dashboard's session through Node's mysql2 (issue 13), with `query` (text
// protocol) and `execute` (server-side prepared statements).
//
//     node drivers.js <mysql port> <fixture warehouse>
//
// Prints `OK mysql2` and exits 0, or throws naming the step. Exit 3 when mysql2 is missing.
'use strict';

let mysql;
try {
  mysql = require('mysql2/promise');
} catch (missing) {
  console.log('SKIPPED: mysql2 is not installed; run scripts/test-deps.sh');
  process.exit(3);
}

const [port, warehouse] = [Number(process.argv[2]), process.argv[3]];
const catalog = 'drv_mysql2';

function expect(condition, what) {
  if (!condition) throw new Error(what);
}

async function session() {
  // No database (mysql2 sends an empty one with CLIENT_CONNECT_WITH_DB).
  let conn = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root' });
  let [rows] = await conn.query('SELECT DATABASE() AS db, 1/0 AS q');
  expect(rows[0].db === null && rows[0].q === null, `DATABASE() and 1/0 are NULL: ${JSON.stringify(rows)}`);
  await conn.query('SHOW TABLES').then(
    () => { throw new Error('SHOW TABLES without a database must fail'); },
    (error) => expect(error.errno === 1046, `1046, got ${error.message}`),
  );
  await conn.end();

  conn = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root', database: 'information_schema' });
  // The statistics-table queries of docs/troubleshooting.md.
  [rows] = await conn.query(`SELECT fe_host, max_weight, estimated_weight, node_memory_bytes, process_rss_bytes,
                                    reclaim_request_count, reclaimed_bytes
                             FROM information_schema.catalog_meta_cache_nodes`);
  expect(rows.length === 1, 'one node row');
  [rows] = await conn.query(`SELECT catalog_name, catalog_type, max_weight, estimated_weight, cache_count
                             FROM information_schema.catalogs ORDER BY estimated_weight DESC`);
  [rows] = await conn.query(`SELECT fe_host, SUM(estimated_weight) AS estimated_weight
                             FROM information_schema.catalog_meta_cache_statistics
                             WHERE max_weight >= 0 GROUP BY fe_host ORDER BY fe_host`);
  await conn.query(`DROP CATALOG IF EXISTS ${catalog}`);
  await conn.query(`CREATE CATALOG ${catalog} PROPERTIES ("type" = "hms", "warehouse" = "${warehouse}",
                    "meta.cache.max-weight" = "64MB")`);
  [rows] = await conn.query(`SHOW DATABASES FROM ${catalog}`);
  expect(rows.some((r) => Object.values(r)[0] === 'sales'), 'the new catalog reads');
  // A prepared ALTER (DDL on the binary protocol) with the limit error, then the connection goes on.
  await conn.execute(`ALTER CATALOG ${catalog} SET PROPERTIES ("meta.cache.hive.file.max-weight" = ?)`, ['1GB']).then(
    () => { throw new Error('an entry limit above the catalog\'s must be refused'); },
    (error) => expect(error.message.includes('can not exceed meta.cache.max-weight'), error.message),
  );
  [rows] = await conn.execute(
    `SELECT engine_name, entry_name, estimated_weight, max_weight
     FROM information_schema.catalog_meta_cache_statistics
     WHERE catalog_name = ? AND max_weight >= ? ORDER BY estimated_weight DESC`,
    [catalog, 0],
  );
  expect(rows.length > 0 && rows[0].max_weight >= 0, `prepared statistics rows: ${JSON.stringify(rows[0])}`);
  // JavaScript numbers go as doubles; LIMIT takes them as MySQL does.
  [rows] = await conn.execute('SELECT catalog_name FROM information_schema.catalogs ORDER BY catalog_name LIMIT ? OFFSET ?', [1, 0]);
  expect(rows.length === 1, `LIMIT ? with a JavaScript number: ${JSON.stringify(rows)}`);
  [rows] = await conn.execute('SELECT ? AS s, ? AS n, ? AS d', ["it's \\ ok", 7, null]);
  expect(rows[0].s === "it's \\ ok" && rows[0].n === 7 && rows[0].d === null, JSON.stringify(rows));
  await conn.query(`DROP CATALOG ${catalog}`);
  await conn.end();
}

session().then(
  () => console.log('OK mysql2'),
  (error) => { console.error(error.stack || String(error)); process.exit(1); },
);
