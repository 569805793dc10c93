// Debezium's embedded MySQL connector against Canyon's binary log: the initial
// snapshot, then streamed inserts, updates and deletes, and a DDL followed by
// rows that use its new column; then the connector stopped and started again
// from its stored offsets.
//
// tests/debezium.rs starts a server with `log_bin = true` and `server_id = 7`
// and runs this file with the single-file source launcher (`java -cp JARS
// Debezium.java`), CANYON_HOST, CANYON_PORT, CANYON_USER, CANYON_PASSWORD and
// CANYON_WORK (a scratch directory for Debezium's offsets and schema history)
// set, and the jars of tests/java/debezium/pom.xml (Debezium 3.6.1.Final and
// what it pulls in, fetched by scripts/install-deps.sh) on the class path. It
// prints one line per check and exits non-zero on the first failed one.
//
// The engine runs with the Connect format, so each change arrives as a Kafka
// Connect SourceRecord whose value is Debezium's envelope Struct (before, after,
// op, source): every column is checked as the Java value Debezium's MySQL
// connector makes of it, which is the same whether the value came from the
// snapshot's SELECT (text protocol through Connector/J) or from a ROWS event of
// the binary log (mysql-binlog-connector-java's decoder). The connector
// properties used are those docs/replication.md lists.

import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;

public class Debezium {
    static String host = env("CANYON_HOST", "127.0.0.1");
    static String port = env("CANYON_PORT", null);
    static String user = env("CANYON_USER", "root");
    static String password = env("CANYON_PASSWORD", "");
    static Path work = Path.of(env("CANYON_WORK", null));

    /** How long one expected change may take to arrive. */
    static final Duration EVENT_WAIT = Duration.ofSeconds(60);
    static final String DB = "dbz";
    static final String TOPIC = "canyon." + DB + ".t";

    static String env(String name, String dflt) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            if (dflt == null) {
                throw new IllegalStateException(name + " is not set: run through tests/debezium.rs");
            }
            return dflt;
        }
        return v;
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError("FAILED: " + what);
        }
        System.out.println("ok: " + what);
    }

    // ---- The table and its rows -------------------------------------------------------

    static final String CREATE = """
        CREATE TABLE t (
          id INT NOT NULL PRIMARY KEY,
          i INT,
          ti TINYINT,
          si SMALLINT UNSIGNED,
          mi MEDIUMINT,
          bu BIGINT UNSIGNED,
          bi BIGINT,
          dc DECIMAL(12,4),
          dbl DOUBLE,
          vc VARCHAR(64),
          txt TEXT,
          ch CHAR(4),
          d DATE,
          dt DATETIME(6),
          ts TIMESTAMP(3) NULL,
          tm TIME(6),
          yr YEAR,
          e ENUM('red','green','blue'),
          s SET('a','b','c','d'),
          bl BLOB,
          vb VARBINARY(16),
          j JSON,
          b BIT(10),
          b1 BIT(1)
        )""";

    /**
     * One row: the SQL literals that insert it and the values Debezium must report,
     * column by column (null for SQL NULL).
     */
    record Row(int id, Map<String, String> sql, Map<String, Object> expected) {}

    /** Builds a row from (column, SQL literal, expected Debezium value) triples. */
    static Row row(int id, Object... triples) {
        Map<String, String> sql = new LinkedHashMap<>();
        Map<String, Object> expected = new LinkedHashMap<>();
        sql.put("id", Integer.toString(id));
        expected.put("id", id);
        for (int k = 0; k < triples.length; k += 3) {
            sql.put((String) triples[k], (String) triples[k + 1]);
            expected.put((String) triples[k], triples[k + 2]);
        }
        return new Row(id, sql, expected);
    }

    static int days(String date) {
        return (int) LocalDate.parse(date).toEpochDay();
    }

    static long micros(String datetime) {
        LocalDateTime t = LocalDateTime.parse(datetime);
        return t.toEpochSecond(ZoneOffset.UTC) * 1_000_000L + t.getNano() / 1_000;
    }

    static long timeMicros(String time) {
        return LocalTime.parse(time).toNanoOfDay() / 1_000;
    }

    static ByteBuffer bytes(int... b) {
        byte[] out = new byte[b.length];
        for (int k = 0; k < b.length; k++) {
            out[k] = (byte) b[k];
        }
        return ByteBuffer.wrap(out);
    }

    /** A JSON value, compared as a parsed tree (MySQL's text and Debezium's differ in spacing). */
    record Json(String text) {}

    /**
     * A TIMESTAMP value: Debezium's io.debezium.time.ZonedTimestamp, an ISO-8601
     * string in UTC whose fraction has no trailing zeros; compared as an instant.
     */
    record Stamp(String iso) {}

    /** A row with every column filled, the values around the edges of each type. */
    static Row full(int id, int i, String vc, String bu) {
        return row(id,
            "i", Integer.toString(i), i,
            "ti", "-128", (short) -128,
            "si", "65535", 65535,
            "mi", "-8388608", -8388608,
            "bu", bu, new BigDecimal(bu),
            "bi", "-9223372036854775808", Long.MIN_VALUE,
            "dc", "-12345678.9012", new BigDecimal("-12345678.9012"),
            "dbl", "2.5e-300", 2.5e-300,
            "vc", "'" + vc + "'", vc,
            "txt", "'héllo wörld – 日本語 🚀'", "héllo wörld – 日本語 🚀",
            "ch", "'ab'", "ab",
            "d", "'2024-02-29'", days("2024-02-29"),
            "dt", "'2023-12-31 23:59:59.123456'", micros("2023-12-31T23:59:59.123456"),
            "ts", "'2021-06-15 08:30:00.250'", new Stamp("2021-06-15T08:30:00.250Z"),
            "tm", "'13:14:15.000016'", timeMicros("13:14:15.000016"),
            "yr", "2155", 2155,
            "e", "'green'", "green",
            "s", "'a,c'", "a,c",
            "bl", "X'00FF10'", bytes(0x00, 0xff, 0x10),
            "vb", "X'DEADBEEF'", bytes(0xde, 0xad, 0xbe, 0xef),
            "j", "'{\"k\": [1, 2.5, \"x\", null, true], \"o\": {\"n\": -7}}'",
                new Json("{\"k\": [1, 2.5, \"x\", null, true], \"o\": {\"n\": -7}}"),
            // BIT values come little-endian (io.debezium.data.Bits); BIT(1) as a boolean.
            "b", "b'1000000011'", bytes(0x03, 0x02),
            "b1", "b'1'", true);
    }

    /** A row with every nullable column NULL. */
    static Row nulls(int id) {
        Object[] t = new Object[3 * 23];
        String[] cols = {"i", "ti", "si", "mi", "bu", "bi", "dc", "dbl", "vc", "txt", "ch", "d", "dt", "ts",
            "tm", "yr", "e", "s", "bl", "vb", "j", "b", "b1"};
        for (int k = 0; k < cols.length; k++) {
            t[3 * k] = cols[k];
            t[3 * k + 1] = "NULL";
            t[3 * k + 2] = null;
        }
        return row(id, t);
    }

    /** A row of ordinary values, different from full()'s in every column. */
    static Row plain(int id) {
        return row(id,
            "i", "-2147483648", Integer.MIN_VALUE,
            "ti", "127", (short) 127,
            "si", "0", 0,
            "mi", "8388607", 8388607,
            "bu", "0", new BigDecimal("0"),
            "bi", "9223372036854775807", Long.MAX_VALUE,
            "dc", "0.0001", new BigDecimal("0.0001"),
            "dbl", "-1.5", -1.5,
            "vc", "''", "",
            "txt", "'line1\\nline2'", "line1\nline2",
            "ch", "'wxyz'", "wxyz",
            "d", "'1000-01-01'", days("1000-01-01"),
            "dt", "'1970-01-01 00:00:00.000001'", 1L,
            "ts", "'1970-01-01 00:00:01.000'", new Stamp("1970-01-01T00:00:01Z"),
            "tm", "'-838:59:59.000000'", -(838L * 3600 + 59 * 60 + 59) * 1_000_000L,
            "yr", "1901", 1901,
            "e", "'blue'", "blue",
            "s", "''", "",
            "bl", "X''", bytes(),
            "vb", "X'00'", bytes(0),
            "j", "'[]'", new Json("[]"),
            "b", "b'0'", bytes(0, 0),
            "b1", "b'0'", false);
    }

    static String insertSql(Row r) {
        return "INSERT INTO t (" + String.join(", ", r.sql.keySet()) + ") VALUES ("
            + String.join(", ", r.sql.values()) + ")";
    }

    // ---- Comparing Debezium's values with the expected ones ------------------------------

    static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();

    static boolean same(Object expected, Object actual) {
        if (expected == null || actual == null) {
            return expected == actual;
        }
        if (expected instanceof Json j) {
            try {
                return actual instanceof String s && JSON.readTree(j.text).equals(JSON.readTree(s));
            } catch (Exception e) {
                return false;
            }
        }
        if (expected instanceof Stamp t) {
            try {
                return actual instanceof String s && java.time.Instant.parse(s).equals(java.time.Instant.parse(t.iso));
            } catch (Exception e) {
                return false;
            }
        }
        if (expected instanceof BigDecimal b) {
            return actual instanceof BigDecimal a && a.compareTo(b) == 0;
        }
        if (expected instanceof ByteBuffer b) {
            ByteBuffer a = actual instanceof byte[] arr ? ByteBuffer.wrap(arr) : (ByteBuffer) actual;
            return a.duplicate().rewind().equals(b.duplicate().rewind());
        }
        return expected.equals(actual);
    }

    static String show(Object v) {
        if (v instanceof ByteBuffer b) {
            byte[] arr = new byte[b.remaining()];
            b.duplicate().get(arr);
            return "0x" + HexFormat.of().formatHex(arr);
        }
        if (v instanceof byte[] arr) {
            return "0x" + HexFormat.of().formatHex(arr);
        }
        return v == null ? "null" : v + " (" + v.getClass().getSimpleName() + ")";
    }

    /** Checks every expected column of `image` (a before or after Struct). */
    static void checkImage(String what, Struct image, Row r) {
        check(image != null, what + ": image present");
        List<String> bad = new ArrayList<>();
        for (Map.Entry<String, Object> e : r.expected.entrySet()) {
            Field f = image.schema().field(e.getKey());
            if (f == null) {
                bad.add(e.getKey() + ": no such field");
                continue;
            }
            Object actual = image.get(f);
            if (!same(e.getValue(), actual)) {
                bad.add(e.getKey() + ": expected " + show(e.getValue()) + ", got " + show(actual));
            }
        }
        check(bad.isEmpty(), what + ": all " + r.expected.size() + " columns as written" + (bad.isEmpty() ? "" : " " + bad));
    }

    // ---- The engine ------------------------------------------------------------------

    static final LinkedBlockingQueue<SourceRecord> events = new LinkedBlockingQueue<>();
    static final AtomicReference<Throwable> engineError = new AtomicReference<>();

    static Properties connectorProperties() {
        Properties p = new Properties();
        p.setProperty("name", "canyon-cdc");
        p.setProperty("connector.class", "io.debezium.connector.mysql.MySqlConnector");
        p.setProperty("offset.storage", "org.apache.kafka.connect.storage.FileOffsetBackingStore");
        p.setProperty("offset.storage.file.filename", work.resolve("offsets.dat").toString());
        p.setProperty("offset.flush.interval.ms", "0");
        p.setProperty("schema.history.internal", "io.debezium.storage.file.history.FileSchemaHistory");
        p.setProperty("schema.history.internal.file.filename", work.resolve("schema-history.dat").toString());
        p.setProperty("database.hostname", host);
        p.setProperty("database.port", port);
        p.setProperty("database.user", user);
        p.setProperty("database.password", password);
        // The replica's server id: any but Canyon's own (7).
        p.setProperty("database.server.id", "5401");
        p.setProperty("topic.prefix", "canyon");
        p.setProperty("database.include.list", DB);
        p.setProperty("snapshot.mode", "initial");
        p.setProperty("include.schema.changes", "true");
        p.setProperty("tombstones.on.delete", "false");
        p.setProperty("decimal.handling.mode", "precise");
        p.setProperty("bigint.unsigned.handling.mode", "precise");
        p.setProperty("binary.handling.mode", "bytes");
        p.setProperty("time.precision.mode", "adaptive_time_microseconds");
        p.setProperty("connect.timeout.ms", "10000");
        p.setProperty("errors.max.retries", "0");
        return p;
    }

    /** The next event of any topic (a row change or a schema change), in order. */
    static SourceRecord next(String what) throws InterruptedException {
        long deadline = System.nanoTime() + EVENT_WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            SourceRecord r = events.poll(200, TimeUnit.MILLISECONDS);
            if (r != null) {
                return r;
            }
            Throwable t = engineError.get();
            if (t != null) {
                throw new AssertionError("FAILED: the engine stopped waiting for " + what + ": " + t, t);
            }
        }
        throw new AssertionError("FAILED: no event within " + EVENT_WAIT + " waiting for " + what);
    }

    static SourceRecord nextRow(String what) throws InterruptedException {
        SourceRecord r = next(what);
        check(TOPIC.equals(r.topic()), what + ": a row event of " + TOPIC + " (got topic " + r.topic() + ")");
        return r;
    }

    static Struct value(SourceRecord r) {
        return (Struct) r.value();
    }

    // ---- The test --------------------------------------------------------------------

    public static void main(String[] args) throws Exception {
        String url = "jdbc:mysql://" + host + ":" + port + "/?useSSL=false&allowPublicKeyRetrieval=true";
        try (Connection c = DriverManager.getConnection(url, user, password);
             Statement st = c.createStatement()) {
            run(st);
        }
    }

    static String scalar(Statement st, String sql) throws SQLException {
        try (ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    static void run(Statement st) throws Exception {
        String uuid = scalar(st, "SELECT @@server_uuid");
        // TIMESTAMP literals below are UTC wall-clock values.
        st.execute("SET time_zone = '+00:00'");
        st.execute("CREATE DATABASE " + DB);
        st.execute("USE " + DB);
        st.execute(CREATE);
        // A second table of the included database, never changed: its snapshot
        // (no rows) must not add events of its own.
        st.execute("CREATE TABLE other (k INT PRIMARY KEY)");

        // 1. The snapshot: rows written before Debezium starts.
        Map<Integer, Row> snapshot = new TreeMap<>();
        for (Row r : List.of(full(1, 42, "first", "18446744073709551615"), nulls(2), plain(3),
                full(4, -1, "fourth", "9223372036854775808"))) {
            st.execute(insertSql(r));
            snapshot.put(r.id, r);
        }

        ExecutorService pool = Executors.newSingleThreadExecutor();
        DebeziumEngine<RecordChangeEvent<SourceRecord>> engine = startEngine(pool);
        Throwable failure = null;
        try {
            stream(st, uuid, snapshot);
        } catch (Throwable t) {
            failure = t;
        }
        stopEngine(engine, pool);
        if (failure == null) {
            // 6. The connector again, from the offsets the first one stored.
            pool = Executors.newSingleThreadExecutor();
            try {
                restart(st, pool);
            } catch (Throwable t) {
                failure = t;
            }
        }
        if (failure != null) {
            failure.printStackTrace();
            // Exit at once: a failed engine may leave non-daemon threads behind.
            System.exit(1);
        }
        System.out.println("Debezium.java: all checks passed");
        System.exit(0);
    }

    static DebeziumEngine<RecordChangeEvent<SourceRecord>> startEngine(ExecutorService pool) {
        DebeziumEngine<RecordChangeEvent<SourceRecord>> engine = DebeziumEngine
            .create(ChangeEventFormat.of(Connect.class))
            .using(connectorProperties())
            .notifying(e -> events.add(e.record()))
            .using((success, message, error) -> {
                if (!success) {
                    engineError.set(error != null ? error : new RuntimeException(message));
                }
            })
            .build();
        pool.execute(engine);
        return engine;
    }

    static void stopEngine(DebeziumEngine<RecordChangeEvent<SourceRecord>> engine, ExecutorService pool)
            throws InterruptedException {
        try {
            engine.close();
        } catch (Exception e) {
            // Already stopped (after a failure the engine shuts itself down).
        }
        pool.shutdown();
        pool.awaitTermination(60, TimeUnit.SECONDS);
    }

    /**
     * A connector restarted from its stored offsets: Debezium checks the stored GTID set
     * against the server's (SELECT GTID_SUBTRACT(...)) and goes on streaming from it, with
     * no new snapshot: the row written while it was down arrives, once, then rows written
     * after it started.
     */
    static void restart(Statement st, ExecutorService pool) throws Exception {
        Row down = plain(30);
        down.expected.put("extra", "dflt");
        st.execute(insertSql(down));
        DebeziumEngine<RecordChangeEvent<SourceRecord>> engine = startEngine(pool);
        try {
            Struct c = value(nextRow("after the restart: the insert of row 30, made while it was down"));
            check("c".equals(c.getString("op")), "restart: insert 30 streamed, op is c (got " + c.getString("op") + ")");
            checkImage("restart: insert 30", c.getStruct("after"), down);
            st.execute("DELETE FROM t WHERE id = 30");
            Struct d = value(nextRow("after the restart: the delete of row 30"));
            check("d".equals(d.getString("op")), "restart: delete 30, op is d (got " + d.getString("op") + ")");
            checkImage("restart: delete 30 before", d.getStruct("before"), down);
            SourceRecord extra = events.poll(2, TimeUnit.SECONDS);
            check(extra == null, "restart: no further events" + (extra == null ? "" : " (got " + extra + ")"));
            check(engineError.get() == null, "restart: the engine ran without error");
        } finally {
            stopEngine(engine, pool);
        }
    }

    static void stream(Statement st, String uuid, Map<Integer, Row> snapshot) throws Exception {
        // The snapshot's schema changes (the database's CREATE TABLEs) come first, on the
        // server topic; then one READ event per row of t, in any order.
        Map<Integer, Struct> read = new HashMap<>();
        int schemaChanges = 0;
        while (read.size() < snapshot.size()) {
            SourceRecord r = next("snapshot READ events (" + read.size() + " of " + snapshot.size() + " so far)");
            if (r.topic().equals("canyon")) {
                schemaChanges++;
                continue;
            }
            check(TOPIC.equals(r.topic()), "snapshot: event of " + TOPIC + " (got " + r.topic() + ")");
            Struct v = value(r);
            check("r".equals(v.getString("op")), "snapshot: op is r (got " + v.getString("op") + ")");
            check(v.get("before") == null, "snapshot: no before image");
            int id = v.getStruct("after").getInt32("id");
            check(snapshot.containsKey(id) && !read.containsKey(id), "snapshot: row " + id + " expected and new");
            read.put(id, v);
            Struct key = (Struct) r.key();
            check(key != null && key.getInt32("id") == id, "snapshot: key of row " + id + " is its primary key");
        }
        check(schemaChanges >= 1, "snapshot: schema change events before the rows (" + schemaChanges + ")");
        for (Row r : snapshot.values()) {
            checkImage("snapshot row " + r.id, read.get(r.id).getStruct("after"), r);
        }
        String lastSnapshot = read.values().stream()
            .map(v -> v.getStruct("source").getString("snapshot"))
            .filter(s -> s.startsWith("last")).findFirst().orElse(null);
        check(lastSnapshot != null, "snapshot: one READ marked last (" + lastSnapshot + ")");

        // 2. Streaming: a transaction of two inserts.
        Row a = full(10, 7, "streamed", "18446744073709551614");
        Row b = plain(11);
        st.execute("BEGIN");
        st.execute(insertSql(a));
        st.execute(insertSql(b));
        st.execute("COMMIT");
        Struct ca = value(nextRow("insert of row 10"));
        check("c".equals(ca.getString("op")), "insert 10: op is c (got " + ca.getString("op") + ")");
        check(ca.get("before") == null, "insert 10: no before image");
        checkImage("insert 10", ca.getStruct("after"), a);
        Struct source = ca.getStruct("source");
        String gtid = source.getString("gtid");
        check(gtid != null && gtid.startsWith(uuid + ":"), "insert 10: source.gtid " + gtid + " is Canyon's " + uuid);
        check(source.getInt64("server_id") == 7L, "insert 10: source.server_id is 7 (got " + source.get("server_id") + ")");
        check(source.getString("file") != null && source.getString("file").startsWith("binlog."),
            "insert 10: source.file " + source.getString("file"));
        check(DB.equals(source.getString("db")) && "t".equals(source.getString("table")), "insert 10: source db and table");
        // get(), not getString(): an absent value reads as the field's default, "false".
        check("false".equals(source.get("snapshot")),
            "insert 10: not a snapshot event (" + show(source.get("snapshot")) + ")");
        Struct cb = value(nextRow("insert of row 11"));
        check("c".equals(cb.getString("op")), "insert 11: op is c");
        checkImage("insert 11", cb.getStruct("after"), b);
        check(gtid.equals(cb.getStruct("source").getString("gtid")), "insert 11: the same GTID as insert 10 (one transaction)");

        // 3. An update: every column changes, some to NULL; the before image is the old row.
        Row n = nulls(10);
        st.execute("UPDATE t SET " + assignments(n) + " WHERE id = 10");
        Struct u = value(nextRow("update of row 10"));
        check("u".equals(u.getString("op")), "update 10: op is u (got " + u.getString("op") + ")");
        checkImage("update 10 before", u.getStruct("before"), a);
        checkImage("update 10 after", u.getStruct("after"), n);
        String gtid2 = u.getStruct("source").getString("gtid");
        check(gtid2 != null && !gtid2.equals(gtid), "update 10: a new GTID (" + gtid2 + ")");

        // An update of a snapshot row, and one that moves NULLs back to values.
        Row p = plain(2);
        st.execute("UPDATE t SET " + assignments(p) + " WHERE id = 2");
        Struct u2 = value(nextRow("update of row 2"));
        check("u".equals(u2.getString("op")), "update 2: op is u");
        checkImage("update 2 before", u2.getStruct("before"), snapshot.get(2));
        checkImage("update 2 after", u2.getStruct("after"), p);

        // 4. A delete: the before image is the whole row, the after image is null.
        st.execute("DELETE FROM t WHERE id = 1");
        Struct d = value(nextRow("delete of row 1"));
        check("d".equals(d.getString("op")), "delete 1: op is d (got " + d.getString("op") + ")");
        checkImage("delete 1 before", d.getStruct("before"), snapshot.get(1));
        check(d.get("after") == null, "delete 1: no after image");

        // A statement changing several rows: one event per row, in order.
        st.execute("UPDATE t SET i = i + 1000 WHERE id IN (3, 4) ORDER BY id");
        for (Row r : List.of(snapshot.get(3), snapshot.get(4))) {
            Struct m = value(nextRow("multi-row update of row " + r.id));
            check("u".equals(m.getString("op")), "multi-row update " + r.id + ": op is u");
            checkImage("multi-row update " + r.id + " before", m.getStruct("before"), r);
            Row after = new Row(r.id, r.sql, new LinkedHashMap<>(r.expected));
            after.expected.put("i", (Integer) r.expected.get("i") + 1000);
            checkImage("multi-row update " + r.id + " after", m.getStruct("after"), after);
        }

        // 5. DDL: a new column; Debezium reports the change and the rows after it have it.
        st.execute("ALTER TABLE t ADD COLUMN extra VARCHAR(20) DEFAULT 'dflt' AFTER i");
        SourceRecord ddl = next("the ALTER TABLE's schema change event");
        check("canyon".equals(ddl.topic()), "alter: a schema change event on topic canyon (got " + ddl.topic() + ")");
        String ddlText = value(ddl).getString("ddl");
        check(ddlText != null && ddlText.toUpperCase().contains("ADD COLUMN EXTRA"), "alter: ddl text " + ddlText);

        Row x = full(20, 99, "after-ddl", "1");
        x.sql.put("extra", "'new!'");
        x.expected.put("extra", "new!");
        st.execute(insertSql(x));
        Struct cx = value(nextRow("insert after the ALTER"));
        check("c".equals(cx.getString("op")), "insert 20: op is c");
        checkImage("insert 20 (new column)", cx.getStruct("after"), x);
        check(cx.getStruct("after").schema().fields().get(2).name().equals("extra"),
            "insert 20: extra is the third field, where AFTER i put it");

        // An old row updated after the ALTER: its before image has the column's default.
        st.execute("UPDATE t SET extra = 'set' WHERE id = 11");
        Struct ux = value(nextRow("update of row 11 after the ALTER"));
        Row bBefore = new Row(b.id, b.sql, new LinkedHashMap<>(b.expected));
        bBefore.expected.put("extra", "dflt");
        Row bAfter = new Row(b.id, b.sql, new LinkedHashMap<>(b.expected));
        bAfter.expected.put("extra", "set");
        checkImage("update 11 before (default of the new column)", ux.getStruct("before"), bBefore);
        checkImage("update 11 after", ux.getStruct("after"), bAfter);

        st.execute("DELETE FROM t WHERE id = 20");
        Struct dx = value(nextRow("delete of row 20"));
        check("d".equals(dx.getString("op")), "delete 20: op is d");
        checkImage("delete 20 before", dx.getStruct("before"), x);

        // Nothing else arrives: no duplicate or stray events.
        SourceRecord extra = events.poll(2, TimeUnit.SECONDS);
        check(extra == null, "no further events" + (extra == null ? "" : " (got " + extra + ")"));
        check(engineError.get() == null, "the engine ran without error");
    }

    static String assignments(Row r) {
        List<String> set = new ArrayList<>();
        for (Map.Entry<String, String> e : r.sql.entrySet()) {
            if (!e.getKey().equals("id")) {
                set.add(e.getKey() + " = " + e.getValue());
            }
        }
        return String.join(", ", set);
    }
}
