// JDBC drivers against Canyon: MySQL Connector/J (with server-side and with
// client-side prepared statements) and MariaDB Connector/J.
//
// tests/drivers_java.rs starts a server and runs this file with the single-file
// source launcher (`java -cp JARS Drivers.java`), CANYON_HOST, CANYON_PORT,
// CANYON_USER and CANYON_PASSWORD set, and the driver jars (from Maven Central,
// fetched by scripts/install-deps.sh) on the class path. It prints one line per
// check and exits non-zero on the first failed one.
//
// DatabaseMetaData (getTables, getColumns, getPrimaryKeys, getIndexInfo) reads
// information_schema, as both drivers do against a MySQL 8 server.
//
// XA goes through each driver's XADataSource (Connector/J's
// MysqlXADataSource, MariaDB's MariaDbDataSource), which turns the
// javax.transaction.xa.XAResource calls into XA START / END / PREPARE /
// COMMIT / ROLLBACK / RECOVER statements.

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Date;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.util.Arrays;
import java.util.Objects;
import javax.sql.XAConnection;
import javax.sql.XADataSource;
import javax.transaction.xa.XAException;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

public class Drivers {
    static final String TEXT = "héllo wörld – 日本語 🚀🦀 𝄞 'q' \\ \"dq\"";

    static String host = env("CANYON_HOST", "127.0.0.1");
    static String port = env("CANYON_PORT", null);
    static String user = env("CANYON_USER", "root");
    static String password = env("CANYON_PASSWORD", "");

    static String env(String name, String dflt) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            if (dflt == null) {
                throw new IllegalStateException(name + " is not set: run through tests/drivers_java.rs");
            }
            return dflt;
        }
        return v;
    }

    /** One driver configuration: a name and a URL prefix up to the database. */
    record Flavor(String name, String scheme, String options) {
        String url(String db) {
            return scheme + "://" + host + ":" + port + "/" + db + "?" + options;
        }

        Connection connect(String db) throws SQLException {
            return DriverManager.getConnection(url(db), user, password);
        }

        /** The driver's XADataSource for `db`, with this flavor's options. */
        XADataSource xaDataSource(String db) throws SQLException {
            if (scheme.equals("jdbc:mysql")) {
                com.mysql.cj.jdbc.MysqlXADataSource ds = new com.mysql.cj.jdbc.MysqlXADataSource();
                ds.setUrl(url(db));
                ds.setUser(user);
                ds.setPassword(password);
                return ds;
            }
            org.mariadb.jdbc.MariaDbDataSource ds = new org.mariadb.jdbc.MariaDbDataSource(url(db));
            ds.setUser(user);
            ds.setPassword(password);
            return ds;
        }
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError("check failed: " + what);
        }
    }

    static void checkEq(Object got, Object want, String what) {
        if (!Objects.equals(got, want)) {
            throw new AssertionError(what + ": got <" + got + "> want <" + want + ">");
        }
    }

    interface Body {
        void run() throws Exception;
    }

    /** Runs a statement that must fail with the given MySQL error code. */
    static SQLException expectError(int code, Body body, String what) throws Exception {
        try {
            body.run();
        } catch (SQLException e) {
            checkEq(e.getErrorCode(), code, what + " (error code; message: " + e.getMessage() + ")");
            return e;
        }
        throw new AssertionError(what + ": no error, expected " + code);
    }

    public static void main(String[] args) throws Exception {
        Flavor[] flavors = {
            // sslMode=DISABLED: TLS is being added to Canyon separately.
            new Flavor("mysql-connector-j server-prepared", "jdbc:mysql",
                    "useServerPrepStmts=true&cachePrepStmts=true&sslMode=DISABLED&allowPublicKeyRetrieval=true"),
            new Flavor("mysql-connector-j client-prepared", "jdbc:mysql",
                    "useServerPrepStmts=false&sslMode=DISABLED&allowPublicKeyRetrieval=true"),
            // Batches of INSERTs rewritten into multi-row INSERTs (a common setting).
            new Flavor("mysql-connector-j rewriteBatchedStatements", "jdbc:mysql",
                    "rewriteBatchedStatements=true&sslMode=DISABLED&allowPublicKeyRetrieval=true"),
            new Flavor("mariadb-java-client", "jdbc:mariadb", "sslMode=disable"),
            new Flavor("mariadb-java-client server-prepared", "jdbc:mariadb",
                    "sslMode=disable&useServerPrepStmts=true"),
        };
        String only = args.length > 0 ? args[0] : null;
        int n = 0;
        for (Flavor f : flavors) {
            if (only != null && !f.name().equals(only)) {
                continue;
            }
            String db = "java_" + (n++);
            try (Connection admin = f.connect("")) {
                try (Statement st = admin.createStatement()) {
                    st.execute("CREATE DATABASE " + db);
                }
                try {
                    run(f, db);
                } finally {
                    try (Statement st = admin.createStatement()) {
                        st.execute("DROP DATABASE " + db);
                    }
                }
            } catch (Throwable e) {
                System.out.println("FAIL " + f.name() + ": " + e);
                e.printStackTrace(System.out);
                System.exit(1);
            }
        }
        System.out.println("all checks passed");
    }

    static void run(Flavor f, String db) throws Exception {
        String name = f.name();
        long t0 = System.nanoTime();
        try (Connection c = f.connect(db)) {
            step(name, "connect", () -> connect(c));
            step(name, "statement", () -> statement(c));
            step(name, "prepared types", () -> types(c));
            step(name, "generated keys", () -> generatedKeys(c));
            step(name, "batch", () -> batch(c));
            step(name, "transactions", () -> transactions(f, db, c));
            step(name, "errors", () -> errors(c));
            step(name, "metadata", () -> metadata(c, db));
            step(name, "xa two-phase commit", () -> xaTwoPhaseCommit(f, db, c));
            step(name, "xa rollback", () -> xaRollback(f, db, c));
            step(name, "xa recover after disconnect", () -> xaRecover(f, db, c));
            step(name, "xa one-phase commit", () -> xaOnePhase(f, db, c));
            step(name, "xa unknown xid", () -> xaUnknown(f, db, c));
        }
        System.out.printf("ok   %s (%d ms)%n", name, (System.nanoTime() - t0) / 1_000_000);
    }

    /** DatabaseMetaData over information_schema: tables, columns, keys. */
    static void metadata(Connection c, String db) throws Exception {
        try (Statement st = c.createStatement()) {
            st.execute("CREATE TABLE meta_t (id BIGINT NOT NULL AUTO_INCREMENT, name VARCHAR(40) NOT NULL, "
                    + "price DECIMAL(10,2), PRIMARY KEY (id), UNIQUE KEY u_name (name))");
        }
        java.sql.DatabaseMetaData md = c.getMetaData();
        java.util.List<String> tables = new java.util.ArrayList<>();
        // Connector/J names databases catalogs; MariaDB Connector/J too (by default).
        try (ResultSet rs = md.getTables(db, null, "%", new String[] {"TABLE"})) {
            while (rs.next()) {
                tables.add(rs.getString("TABLE_NAME"));
            }
        }
        check(tables.contains("meta_t"), "getTables lists meta_t: " + tables);
        java.util.List<String> cols = new java.util.ArrayList<>();
        try (ResultSet rs = md.getColumns(db, null, "meta_t", "%")) {
            while (rs.next()) {
                cols.add(rs.getString("COLUMN_NAME") + ":" + rs.getInt("DATA_TYPE") + ":"
                        + rs.getString("IS_NULLABLE") + ":" + rs.getString("IS_AUTOINCREMENT"));
            }
        }
        checkEq(cols, java.util.List.of(
                "id:" + Types.BIGINT + ":NO:YES",
                "name:" + Types.VARCHAR + ":NO:NO",
                "price:" + Types.DECIMAL + ":YES:NO"), "getColumns");
        try (ResultSet rs = md.getPrimaryKeys(db, null, "meta_t")) {
            check(rs.next(), "a primary key");
            checkEq(rs.getString("COLUMN_NAME"), "id", "primary key column");
            check(!rs.next(), "one primary key column");
        }
        boolean unique = false;
        try (ResultSet rs = md.getIndexInfo(db, null, "meta_t", true, false)) {
            while (rs.next()) {
                unique |= "u_name".equals(rs.getString("INDEX_NAME"));
            }
        }
        check(unique, "getIndexInfo lists the unique key u_name");
    }

    // XA: "MySQL Connector/J's XADataSource completes a two-branch
    // transaction" (and MariaDB Connector/J's). Two XAConnections are two
    // branches of one global transaction (same format id and gtrid, different
    // branch qualifiers): each writes one row of table xa_ledger between
    // XAResource.start and end(TMSUCCESS), both are prepared (XA_OK) and both
    // committed; only then does a plain connection see the rows. The other
    // steps: two prepared branches rolled back leave no row; a branch prepared
    // on a connection that is then closed survives the disconnect, is listed
    // by recover() on a new XAConnection with the same format id, gtrid and
    // bqual bytes, and is committed from there; commit(xid, true) commits a
    // single unprepared branch in one phase; and commit or rollback of an xid
    // the server does not know fails with XAException XAER_NOTA (MySQL's
    // error 1397). The xids are the test's own (TestXid): the gtrids start
    // with the database name, as XA RECOVER lists the branches of the whole
    // server, and contain bytes that are not text (0x00, 0xff, ',', quote).

    static final int XA_FORMAT = 4660;

    /** An Xid of this test's own making: the drivers accept any implementation. */
    record TestXid(int getFormatId, byte[] getGlobalTransactionId, byte[] getBranchQualifier) implements Xid {
        @Override
        public String toString() {
            return getFormatId + ":" + hex(getGlobalTransactionId) + ":" + hex(getBranchQualifier);
        }
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) {
            sb.append(String.format("%02x", x));
        }
        return sb.toString();
    }

    /** The xid of branch `bqual` of global transaction `tag` of database `db`. */
    static Xid xid(String db, String tag, String bqual) {
        byte[] name = (db + "-" + tag).getBytes(StandardCharsets.UTF_8);
        byte[] odd = {0, (byte) 0xff, ',', '\''};
        byte[] gtrid = Arrays.copyOf(name, name.length + odd.length);
        System.arraycopy(odd, 0, gtrid, name.length, odd.length);
        return new TestXid(XA_FORMAT, gtrid, bqual.getBytes(StandardCharsets.UTF_8));
    }

    static boolean sameXid(Xid a, Xid b) {
        return a.getFormatId() == b.getFormatId()
                && Arrays.equals(a.getGlobalTransactionId(), b.getGlobalTransactionId())
                && Arrays.equals(a.getBranchQualifier(), b.getBranchQualifier());
    }

    /** The branches recover() lists whose gtrid is this database's (tagged `db-`). */
    static java.util.List<String> recovered(XAResource r, String db) throws XAException {
        byte[] prefix = (db + "-").getBytes(StandardCharsets.UTF_8);
        java.util.List<String> mine = new java.util.ArrayList<>();
        for (Xid x : r.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN)) {
            byte[] g = x.getGlobalTransactionId();
            if (g.length >= prefix.length && Arrays.equals(Arrays.copyOf(g, prefix.length), prefix)) {
                mine.add(new TestXid(x.getFormatId(), g, x.getBranchQualifier()).toString());
            }
        }
        java.util.Collections.sort(mine);
        return mine;
    }

    /** Runs branch `x`: XA START, INSERT (id, amount) into xa_ledger, XA END. */
    static void xaBranch(XAConnection xc, Xid x, int id, long amount) throws Exception {
        XAResource r = xc.getXAResource();
        r.start(x, XAResource.TMNOFLAGS);
        try (PreparedStatement ps = xc.getConnection().prepareStatement("INSERT INTO xa_ledger VALUES (?, ?)")) {
            ps.setInt(1, id);
            ps.setLong(2, amount);
            checkEq(ps.executeUpdate(), 1, "insert in branch " + x);
        }
        r.end(x, XAResource.TMSUCCESS);
    }

    /** The rows of xa_ledger with the given ids, as "id=amount ...", read on `c`. */
    static String ledger(Connection c, String ids) throws SQLException {
        StringBuilder sb = new StringBuilder();
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT id, amount FROM xa_ledger WHERE id IN (" + ids + ") ORDER BY id")) {
            while (rs.next()) {
                sb.append(rs.getInt(1)).append('=').append(rs.getLong(2)).append(' ');
            }
        }
        return sb.toString().trim();
    }

    static void xaTwoPhaseCommit(Flavor f, String db, Connection c) throws Exception {
        try (Statement st = c.createStatement()) {
            st.executeUpdate("CREATE TABLE xa_ledger (id INT PRIMARY KEY, amount BIGINT NOT NULL)");
        }
        XADataSource ds = f.xaDataSource(db);
        XAConnection debit = ds.getXAConnection();
        XAConnection credit = ds.getXAConnection();
        try {
            Xid x1 = xid(db, "commit", "debit");
            Xid x2 = xid(db, "commit", "credit");
            xaBranch(debit, x1, 1, -30);
            xaBranch(credit, x2, 2, 30);
            checkEq(ledger(c, "1, 2"), "", "ended branches invisible");
            checkEq(debit.getXAResource().prepare(x1), XAResource.XA_OK, "prepare debit");
            checkEq(credit.getXAResource().prepare(x2), XAResource.XA_OK, "prepare credit");
            checkEq(ledger(c, "1, 2"), "", "prepared branches invisible");
            checkEq(recovered(debit.getXAResource(), db), java.util.List.of(x2.toString(), x1.toString()),
                    "recover lists both prepared branches");
            debit.getXAResource().commit(x1, false);
            credit.getXAResource().commit(x2, false);
            checkEq(ledger(c, "1, 2"), "1=-30 2=30", "both branches committed");
            checkEq(recovered(debit.getXAResource(), db), java.util.List.of(), "recover after commit");
            // The XAConnection's connection works locally again afterwards.
            try (Statement st = debit.getConnection().createStatement();
                    ResultSet rs = st.executeQuery("SELECT SUM(amount) FROM xa_ledger")) {
                check(rs.next(), "sum row");
                checkEq(rs.getLong(1), 0L, "sum read on the XA connection after commit");
            }
        } finally {
            debit.close();
            credit.close();
        }
    }

    static void xaRollback(Flavor f, String db, Connection c) throws Exception {
        XADataSource ds = f.xaDataSource(db);
        XAConnection a = ds.getXAConnection();
        XAConnection b = ds.getXAConnection();
        try {
            Xid x1 = xid(db, "rollback", "a");
            Xid x2 = xid(db, "rollback", "b");
            xaBranch(a, x1, 3, -5);
            xaBranch(b, x2, 4, 5);
            checkEq(a.getXAResource().prepare(x1), XAResource.XA_OK, "prepare a");
            checkEq(b.getXAResource().prepare(x2), XAResource.XA_OK, "prepare b");
            a.getXAResource().rollback(x1);
            b.getXAResource().rollback(x2);
            checkEq(ledger(c, "3, 4"), "", "rolled-back rows absent");
            checkEq(recovered(a.getXAResource(), db), java.util.List.of(), "recover after rollback");
        } finally {
            a.close();
            b.close();
        }
    }

    static void xaRecover(Flavor f, String db, Connection c) throws Exception {
        XADataSource ds = f.xaDataSource(db);
        Xid x = xid(db, "recover", "only");
        long session;
        XAConnection gone = ds.getXAConnection();
        try {
            try (Statement st = gone.getConnection().createStatement();
                    ResultSet rs = st.executeQuery("SELECT CONNECTION_ID()")) {
                check(rs.next(), "CONNECTION_ID row");
                session = rs.getLong(1);
            }
            xaBranch(gone, x, 5, 7);
            checkEq(gone.getXAResource().prepare(x), XAResource.XA_OK, "prepare");
        } finally {
            gone.close();
        }
        // Until the server has ended the closed session the branch is still
        // attached to it, and only that session may finish it (MySQL too).
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (true) {
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?")) {
                ps.setLong(1, session);
                try (ResultSet rs = ps.executeQuery()) {
                    check(rs.next(), "processlist count");
                    if (rs.getLong(1) == 0) {
                        break;
                    }
                }
            }
            check(System.nanoTime() < deadline, "session " + session + " ends within 10 s of close()");
            Thread.sleep(20);
        }
        checkEq(ledger(c, "5"), "", "prepared row invisible after the disconnect");
        XAConnection fresh = ds.getXAConnection();
        try {
            XAResource r = fresh.getXAResource();
            Xid found = null;
            for (Xid y : r.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN)) {
                if (sameXid(y, x)) {
                    check(found == null, "xid listed once by recover");
                    found = y;
                }
            }
            check(found != null, "recover lists " + x + ": " + recovered(r, db));
            checkEq(recovered(r, db), java.util.List.of(x.toString()), "recover lists only the detached branch");
            r.commit(found, false);
            checkEq(ledger(c, "5"), "5=7", "recovered branch committed");
            checkEq(recovered(r, db), java.util.List.of(), "recover after commit");
        } finally {
            fresh.close();
        }
    }

    static void xaOnePhase(Flavor f, String db, Connection c) throws Exception {
        XAConnection xc = f.xaDataSource(db).getXAConnection();
        try {
            // A non-empty bqual: for an empty one both drivers send `0x`, which
            // MySQL's and MariaDB's lexers do not take as a string (1064).
            Xid x = xid(db, "onephase", "single");
            xaBranch(xc, x, 6, 11);
            checkEq(ledger(c, "6"), "", "ended branch invisible");
            xc.getXAResource().commit(x, true);
            checkEq(ledger(c, "6"), "6=11", "one-phase commit");
            checkEq(recovered(xc.getXAResource(), db), java.util.List.of(), "recover after one-phase commit");
        } finally {
            xc.close();
        }
        checkEq(ledger(c, "1, 2, 3, 4, 5, 6"), "1=-30 2=30 5=7 6=11", "ledger after the xa steps");
    }

    static void xaUnknown(Flavor f, String db, Connection c) throws Exception {
        XAConnection xc = f.xaDataSource(db).getXAConnection();
        try {
            XAResource r = xc.getXAResource();
            Xid x = xid(db, "unknown", "nobody");
            for (String op : new String[] {"commit", "rollback"}) {
                XAException e = null;
                try {
                    if (op.equals("commit")) {
                        r.commit(x, false);
                    } else {
                        r.rollback(x);
                    }
                } catch (XAException t) {
                    e = t;
                }
                check(e != null, op + " of an unknown xid fails");
                checkEq(e.errorCode, XAException.XAER_NOTA, op + " of an unknown xid: errorCode (" + e + ")");
            }
            check(xc.getConnection().isValid(5), "connection usable after the XA errors");
        } finally {
            xc.close();
        }
        try (Statement st = c.createStatement()) {
            st.executeUpdate("DROP TABLE xa_ledger");
        }
    }

    static void step(String flavor, String what, Body body) throws Exception {
        try {
            body.run();
        } catch (Throwable e) {
            throw new Exception(flavor + " / " + what + ": " + e, e);
        }
        System.out.println("ok   " + flavor + " / " + what);
    }

    static void connect(Connection c) throws Exception {
        check(c.isValid(5), "isValid");
        check(c.getAutoCommit(), "autocommit on by default");
        String v = c.getMetaData().getDatabaseProductVersion();
        check(v != null && !v.isEmpty(), "server version " + v);
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT 1 + 1, 'x', NULL, @@session.auto_increment_increment")) {
            check(rs.next(), "a row");
            checkEq(rs.getInt(1), 2, "1 + 1");
            checkEq(rs.getString(2), "x", "'x'");
            checkEq(rs.getString(3), null, "NULL");
            check(rs.wasNull(), "wasNull");
            checkEq(rs.getLong(4), 1L, "@@auto_increment_increment");
            check(!rs.next(), "one row");
        }
    }

    static void statement(Connection c) throws Exception {
        try (Statement st = c.createStatement()) {
            st.executeUpdate("CREATE TABLE s (id INT PRIMARY KEY, s VARCHAR(100))");
            checkEq(st.executeUpdate("INSERT INTO s VALUES (1, 'a'), (2, 'b'), (3, NULL)"), 3, "insert count");
            checkEq(st.executeUpdate("UPDATE s SET s = 'z' WHERE id >= 2"), 2, "update count");
            check(st.execute("SELECT id, s FROM s ORDER BY id"), "execute returns a result set");
            try (ResultSet rs = st.getResultSet()) {
                StringBuilder sb = new StringBuilder();
                while (rs.next()) {
                    sb.append(rs.getInt("id")).append('=').append(rs.getString("s")).append(' ');
                }
                checkEq(sb.toString(), "1=a 2=z 3=z ", "rows");
                checkEq(rs.getMetaData().getColumnCount(), 2, "column count");
                checkEq(rs.getMetaData().getColumnLabel(2), "s", "column label");
            }
            checkEq(st.executeUpdate("DELETE FROM s"), 3, "delete count");
        }
    }

    static void types(Connection c) throws Exception {
        try (Statement st = c.createStatement()) {
            st.executeUpdate("CREATE TABLE v (id INT PRIMARY KEY, i BIGINT, s VARCHAR(100), d DECIMAL(12,3),"
                    + " dt DATE, ts DATETIME, vb VARBINARY(16), b BLOB, f DOUBLE, flag BOOLEAN)");
        }
        byte[] blob = new byte[1000];
        for (int k = 0; k < blob.length; k++) {
            blob[k] = (byte) k;
        }
        byte[] vb = {0, 1, (byte) 0xff, 0x27, 0x5c};
        Date day = Date.valueOf("2024-02-29");
        Timestamp at = Timestamp.valueOf("2024-02-29 13:14:15");
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO v VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
            ps.setInt(1, 1);
            ps.setLong(2, Long.MIN_VALUE);
            ps.setString(3, TEXT);
            ps.setBigDecimal(4, new BigDecimal("-12345.678"));
            ps.setDate(5, day);
            ps.setTimestamp(6, at);
            ps.setBytes(7, vb);
            ps.setBytes(8, blob);
            ps.setDouble(9, 1.5);
            ps.setBoolean(10, true);
            checkEq(ps.executeUpdate(), 1, "insert");
            ps.setInt(1, 2);
            ps.setNull(2, Types.BIGINT);
            ps.setNull(3, Types.VARCHAR);
            ps.setNull(4, Types.DECIMAL);
            ps.setNull(5, Types.DATE);
            ps.setNull(6, Types.TIMESTAMP);
            ps.setNull(7, Types.VARBINARY);
            ps.setNull(8, Types.BLOB);
            ps.setNull(9, Types.DOUBLE);
            ps.setNull(10, Types.BOOLEAN);
            checkEq(ps.executeUpdate(), 1, "insert NULLs");
        }
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT i, s, d, dt, ts, vb, b, f, flag FROM v WHERE id = ?")) {
            ps.setInt(1, 1);
            try (ResultSet rs = ps.executeQuery()) {
                check(rs.next(), "row 1");
                checkEq(rs.getLong(1), Long.MIN_VALUE, "BIGINT");
                checkEq(rs.getString(2), TEXT, "VARCHAR with emoji");
                checkEq(rs.getBigDecimal(3), new BigDecimal("-12345.678"), "DECIMAL");
                checkEq(rs.getObject(3).getClass(), BigDecimal.class, "DECIMAL getObject class");
                checkEq(rs.getDate(4), day, "DATE");
                checkEq(rs.getTimestamp(5), at, "DATETIME");
                check(Arrays.equals(rs.getBytes(6), vb), "VARBINARY " + Arrays.toString(rs.getBytes(6)));
                check(Arrays.equals(rs.getBytes(7), blob), "BLOB");
                checkEq(rs.getDouble(8), 1.5, "DOUBLE");
                checkEq(rs.getBoolean(9), true, "BOOLEAN");
                checkEq(rs.getMetaData().getColumnType(1), Types.BIGINT, "BIGINT column type");
                checkEq(rs.getMetaData().getColumnType(3), Types.DECIMAL, "DECIMAL column type");
                checkEq(rs.getMetaData().getScale(3), 3, "DECIMAL scale");
                checkEq(rs.getMetaData().getColumnType(4), Types.DATE, "DATE column type");
                checkEq(rs.getMetaData().getColumnType(5), Types.TIMESTAMP, "DATETIME column type");
            }
            ps.setInt(1, 2);
            try (ResultSet rs = ps.executeQuery()) {
                check(rs.next(), "row 2");
                for (int k = 1; k <= 9; k++) {
                    checkEq(rs.getObject(k), null, "NULL column " + k);
                    check(rs.wasNull(), "wasNull column " + k);
                }
                checkEq(rs.getLong(1), 0L, "getLong of NULL");
            }
        }
        // Parameters compared with columns.
        try (PreparedStatement ps = c.prepareStatement("SELECT id FROM v WHERE s = ? AND d = ? AND dt = ?")) {
            ps.setString(1, TEXT);
            ps.setBigDecimal(2, new BigDecimal("-12345.678"));
            ps.setDate(3, day);
            try (ResultSet rs = ps.executeQuery()) {
                check(rs.next(), "lookup by parameters");
                checkEq(rs.getInt(1), 1, "id");
            }
        }
    }

    static void generatedKeys(Connection c) throws Exception {
        try (Statement st = c.createStatement()) {
            st.executeUpdate("CREATE TABLE g (id BIGINT AUTO_INCREMENT PRIMARY KEY, s VARCHAR(10))");
            st.executeUpdate("INSERT INTO g (s) VALUES ('a')", Statement.RETURN_GENERATED_KEYS);
            try (ResultSet rs = st.getGeneratedKeys()) {
                check(rs.next(), "a generated key");
                checkEq(rs.getLong(1), 1L, "first key");
            }
        }
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO g (s) VALUES (?)", Statement.RETURN_GENERATED_KEYS)) {
            for (long want = 2; want <= 4; want++) {
                ps.setString(1, "k" + want);
                checkEq(ps.executeUpdate(), 1, "insert");
                try (ResultSet rs = ps.getGeneratedKeys()) {
                    check(rs.next(), "a generated key");
                    checkEq(rs.getLong(1), want, "generated key");
                }
            }
        }
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT LAST_INSERT_ID()")) {
            check(rs.next(), "LAST_INSERT_ID row");
            checkEq(rs.getLong(1), 4L, "LAST_INSERT_ID()");
        }
    }

    static void batch(Connection c) throws Exception {
        try (Statement st = c.createStatement()) {
            st.executeUpdate("CREATE TABLE bt (id INT PRIMARY KEY, s VARCHAR(10))");
        }
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO bt VALUES (?, ?)")) {
            for (int k = 1; k <= 5; k++) {
                ps.setInt(1, k);
                if (k == 3) {
                    ps.setNull(2, Types.VARCHAR);
                } else {
                    ps.setString(2, "s" + k);
                }
                ps.addBatch();
            }
            int[] counts = ps.executeBatch();
            checkEq(counts.length, 5, "batch size");
            for (int k : counts) {
                check(k == 1 || k == Statement.SUCCESS_NO_INFO, "batch count " + Arrays.toString(counts));
            }
        }
        try (Statement st = c.createStatement()) {
            st.addBatch("UPDATE bt SET s = 'u' WHERE id <= 2");
            st.addBatch("DELETE FROM bt WHERE id = 5");
            int[] counts = st.executeBatch();
            checkEq(Arrays.toString(counts), "[2, 1]", "statement batch counts");
            try (ResultSet rs = st.executeQuery("SELECT COUNT(*), COUNT(s) FROM bt")) {
                check(rs.next(), "count row");
                checkEq(rs.getInt(1), 4, "rows after batch");
                checkEq(rs.getInt(2), 3, "non-NULL rows after batch");
            }
        }
    }

    static long balance(Connection c, int id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT bal FROM acct WHERE id = ?")) {
            ps.setInt(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                check(rs.next(), "account " + id);
                return rs.getLong(1);
            }
        }
    }

    static void transactions(Flavor f, String db, Connection c) throws Exception {
        try (Statement st = c.createStatement()) {
            st.executeUpdate("CREATE TABLE acct (id INT PRIMARY KEY, bal BIGINT NOT NULL)");
            st.executeUpdate("INSERT INTO acct VALUES (1, 100), (2, 100)");
        }
        try (Connection other = f.connect(db)) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("UPDATE acct SET bal = bal + ? WHERE id = ?")) {
                ps.setLong(1, -30);
                ps.setInt(2, 1);
                ps.executeUpdate();
                ps.setLong(1, 30);
                ps.setInt(2, 2);
                ps.executeUpdate();
            }
            checkEq(balance(c, 1), 70L, "own write");
            checkEq(balance(other, 1), 100L, "uncommitted write invisible");
            c.commit();
            checkEq(balance(other, 1), 70L, "committed");
            checkEq(balance(other, 2), 130L, "committed");

            try (Statement st = c.createStatement()) {
                st.executeUpdate("DELETE FROM acct");
                st.executeUpdate("INSERT INTO acct VALUES (3, 3)");
            }
            c.rollback();
            checkEq(balance(c, 1), 70L, "after rollback");
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM acct")) {
                check(rs.next(), "count");
                checkEq(rs.getInt(1), 2, "rows after rollback");
            }
            c.commit();

            // setReadOnly(true): MariaDB Connector/J sends SET SESSION TRANSACTION
            // READ ONLY and the server refuses the write (1792); Connector/J
            // refuses it itself (error code 0) before sending it.
            c.setReadOnly(true);
            try (Statement st = c.createStatement()) {
                SQLException e = null;
                try {
                    st.executeUpdate("UPDATE acct SET bal = 1");
                } catch (SQLException x) {
                    e = x;
                }
                check(e != null, "a write on a read-only connection fails");
                check(e.getErrorCode() == 1792 || e.getErrorCode() == 0, "read-only error " + e);
            }
            c.rollback();
            c.setReadOnly(false);
            checkEq(balance(c, 1), 70L, "read-only write not applied");

            c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
            checkEq(c.getTransactionIsolation(), Connection.TRANSACTION_READ_COMMITTED, "isolation level");
            c.setAutoCommit(true);
            try (Statement st = c.createStatement()) {
                st.executeUpdate("UPDATE acct SET bal = 0 WHERE id = 1");
            }
            checkEq(balance(other, 1), 0L, "autocommit back on");
        }
    }

    static void errors(Connection c) throws Exception {
        try (Statement st = c.createStatement()) {
            st.executeUpdate("CREATE TABLE e (id INT PRIMARY KEY, s VARCHAR(10) NOT NULL)");
            st.executeUpdate("INSERT INTO e VALUES (1, 'a')");
            SQLException e = expectError(1062, () -> st.executeUpdate("INSERT INTO e VALUES (1, 'b')"), "duplicate key");
            checkEq(e.getSQLState(), "23000", "SQLSTATE of 1062");
            expectError(1146, () -> st.executeQuery("SELECT * FROM missing"), "missing table");
            expectError(1064, () -> st.execute("SELEC 1"), "syntax error");
        }
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO e VALUES (?, ?)")) {
            ps.setInt(1, 1);
            ps.setString(2, "dup");
            expectError(1062, ps::executeUpdate, "duplicate key (prepared)");
            ps.setInt(1, 2);
            ps.setNull(2, Types.VARCHAR);
            expectError(1048, ps::executeUpdate, "NULL into NOT NULL (prepared)");
        }
        expectError(1146, () -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT * FROM missing WHERE id = ?")) {
                ps.setInt(1, 1);
                ps.executeQuery();
            }
        }, "missing table (prepared)");
        check(c.isValid(5), "connection usable after errors");
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM e")) {
            check(rs.next(), "count");
            checkEq(rs.getInt(1), 1, "rows");
        }
        byte[] utf8 = TEXT.getBytes(StandardCharsets.UTF_8);
        check(utf8.length > TEXT.length(), "test text is multi-byte");
    }
}
