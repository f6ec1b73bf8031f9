// One admin's and one dashboard's session through MariaDB Connector/J (issue 13): text
// statements, server-side prepared statements (useServerPrepStmts=true) and the
// DatabaseMetaData browsing DBeaver- and Tableau-style tools do.
//
//     java -cp mariadb-java-client.jar:. Drivers <mysql port> <fixture warehouse>
//
// Prints "OK connector-j" and exits 0, or throws naming the step.
import java.sql.*;
import java.util.*;

public class Drivers {
    static void expect(boolean condition, String what) {
        if (!condition) throw new AssertionError(what);
    }

    static List<String> column(ResultSet rs, String name) throws SQLException {
        List<String> values = new ArrayList<>();
        while (rs.next()) values.add(rs.getString(name));
        rs.close();
        return values;
    }

    public static void main(String[] args) throws Exception {
        String base = "jdbc:mariadb://127.0.0.1:" + args[0] + "/";
        String warehouse = args[1];
        String catalog = "drv_connector_j";
        try (Connection c = DriverManager.getConnection(base, "root", "")) {
            try (ResultSet rs = c.createStatement().executeQuery("SELECT DATABASE(), 1/0")) {
                expect(rs.next() && rs.getString(1) == null && rs.getString(2) == null, "DATABASE() and 1/0 are NULL");
            }
            try {
                c.createStatement().executeQuery("SHOW TABLES");
                throw new AssertionError("SHOW TABLES without a database must fail");
            } catch (SQLException e) {
                expect(e.getErrorCode() == 1046, "1046, got " + e);
            }
        }
        String url = base + "information_schema?useServerPrepStmts=true";
        try (Connection c = DriverManager.getConnection(url, "root", "")) {
            DatabaseMetaData md = c.getMetaData();
            expect(column(md.getCatalogs(), "TABLE_CAT").contains("information_schema"), "getCatalogs");
            column(md.getSchemas(), "TABLE_SCHEM");
            List<String> tables = column(md.getTables("information_schema", null, "%", new String[] {"TABLE", "VIEW"}), "TABLE_NAME");
            expect(tables.contains("catalog_meta_cache_statistics"), "getTables: " + tables);
            List<String> columns = column(md.getColumns("information_schema", null, "catalog_meta_cache_statistics", "%"), "COLUMN_NAME");
            expect(columns.size() == 28 && columns.get(0).equals("FE_HOST"), "getColumns: " + columns);
            column(md.getPrimaryKeys("information_schema", null, "catalogs"), "COLUMN_NAME");
            column(md.getIndexInfo("information_schema", null, "catalogs", false, false), "INDEX_NAME");
            column(md.getImportedKeys("information_schema", null, "catalogs"), "FKCOLUMN_NAME");

            Statement s = c.createStatement();
            // The statistics-table queries of docs/troubleshooting.md.
            for (String sql : new String[] {
                "SELECT fe_host, max_weight, estimated_weight, node_memory_bytes, process_rss_bytes, "
                    + "reclaim_request_count, reclaimed_bytes FROM information_schema.catalog_meta_cache_nodes",
                "SELECT fe_host, SUM(estimated_weight) AS estimated_weight, SUM(weight_reject_count) AS weight_reject_count "
                    + "FROM information_schema.catalog_meta_cache_statistics WHERE max_weight >= 0 GROUP BY fe_host ORDER BY fe_host",
                "SELECT catalog_name, catalog_type, max_weight, estimated_weight, cache_count "
                    + "FROM information_schema.catalogs ORDER BY estimated_weight DESC",
            }) {
                s.executeQuery(sql).close();
            }
            s.execute("DROP CATALOG IF EXISTS " + catalog);
            s.execute("CREATE CATALOG " + catalog + " PROPERTIES (\"type\" = \"hms\", \"warehouse\" = \""
                + warehouse + "\", \"meta.cache.max-weight\" = \"64MB\")");
            expect(column(s.executeQuery("SHOW DATABASES FROM " + catalog), "Database").contains("sales"), "the new catalog reads");
            try (PreparedStatement alter = c.prepareStatement(
                    "ALTER CATALOG " + catalog + " SET PROPERTIES (\"meta.cache.hive.file.max-weight\" = ?)")) {
                alter.setString(1, "1GB");
                alter.execute();
                throw new AssertionError("an entry limit above the catalog's must be refused");
            } catch (SQLException e) {
                expect(e.getMessage().contains("can not exceed meta.cache.max-weight"), e.getMessage());
            }
            try (PreparedStatement p = c.prepareStatement(
                    "SELECT engine_name, entry_name, max_weight FROM information_schema.catalog_meta_cache_statistics "
                    + "WHERE catalog_name = ? AND max_weight >= ? ORDER BY estimated_weight DESC")) {
                p.setString(1, catalog);
                p.setLong(2, 0);
                ResultSet rs = p.executeQuery();
                expect(rs.next() && rs.getLong("max_weight") >= 0, "a prepared statistics query answers");
            }
            try (PreparedStatement p = c.prepareStatement("SELECT ? AS s, ? AS n")) {
                p.setString(1, "it's \\ ok");
                p.setInt(2, 7);
                ResultSet rs = p.executeQuery();
                expect(rs.next() && rs.getString("s").equals("it's \\ ok") && rs.getInt("n") == 7, "values come back as bound");
            }
            s.execute("DROP CATALOG " + catalog);
        }
        System.out.println("OK connector-j");
    }
}
