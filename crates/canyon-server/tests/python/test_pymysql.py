"""PyMySQL against Canyon: connect, round-trips, parameters, transactions, errors."""

import datetime
import decimal

import pymysql
import pytest

TEXT = "héllo wörld – 日本語 🚀"


def connect(params, **kw):
    return pymysql.connect(charset="utf8mb4", **params, **kw)


def test_connect_and_server_info(params):
    conn = connect(params)
    assert conn.get_server_info()
    with conn.cursor() as cur:
        cur.execute("SELECT 1 + 1")
        assert cur.fetchone() == (2,)
        # PyMySQL turns autocommit off at connect unless asked otherwise; numeric
        # @@variables are integer columns, as in MySQL.
        cur.execute("SELECT @@version_comment, @@autocommit")
        assert cur.fetchone()[1] == 0
    conn.ping()
    conn.close()


def test_round_trip(params, dbname):
    conn = connect(params, database=dbname, autocommit=True)
    with conn.cursor() as cur:
        cur.execute(
            "CREATE TABLE t (id INT PRIMARY KEY, d DECIMAL(10,2), f DOUBLE,"
            " s VARCHAR(100), dt DATE, ts DATETIME, n INT)"
        )
        cur.execute(
            "INSERT INTO t VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (
                1,
                decimal.Decimal("12.34"),
                1.5,
                TEXT,
                datetime.date(2024, 2, 29),
                datetime.datetime(2024, 2, 29, 13, 14, 15),
                None,
            ),
        )
        cur.execute("SELECT id, d, f, s, dt, ts, n FROM t")
        row = cur.fetchone()
    assert row == (
        1,
        decimal.Decimal("12.34"),
        1.5,
        TEXT,
        datetime.date(2024, 2, 29),
        datetime.datetime(2024, 2, 29, 13, 14, 15),
        None,
    )
    conn.close()


def test_executemany_and_params(params, dbname):
    conn = connect(params, database=dbname, autocommit=True)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20))")
        n = cur.executemany(
            "INSERT INTO t (id, s) VALUES (%s, %s)", [(i, f"v{i}") for i in range(10)]
        )
        assert n == 10
        cur.execute("SELECT s FROM t WHERE id = %s", (7,))
        assert cur.fetchone() == ("v7",)
        cur.execute("SELECT COUNT(*) FROM t WHERE s LIKE %s", ("v%",))
        assert cur.fetchone() == (10,)
        cur.execute("SELECT %s", ("it's \"quoted\" \\ ok",))
        assert cur.fetchone() == ("it's \"quoted\" \\ ok",)
    conn.close()


def test_transactions(params, dbname):
    conn = connect(params, database=dbname)
    conn.autocommit(False)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY)")
        cur.execute("INSERT INTO t VALUES (1)")
        conn.commit()
        cur.execute("INSERT INTO t VALUES (2)")
        conn.rollback()
        cur.execute("SELECT id FROM t ORDER BY id")
        assert cur.fetchall() == ((1,),)
    other = connect(params, database=dbname, autocommit=True)
    with other.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM t")
        assert cur.fetchone() == (1,)
    other.close()
    conn.close()


def test_errors(params, dbname):
    conn = connect(params, database=dbname, autocommit=True)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY)")
        cur.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(pymysql.err.IntegrityError) as e:
            cur.execute("INSERT INTO t VALUES (1)")
        assert e.value.args[0] == 1062
        with pytest.raises(pymysql.err.ProgrammingError) as e:
            cur.execute("SELEC 1")
        assert e.value.args[0] == 1064
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)
    conn.close()


def test_lastrowid(params, dbname):
    conn = connect(params, database=dbname, autocommit=True)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, s VARCHAR(10))")
        cur.execute("INSERT INTO t (s) VALUES ('a')")
        assert cur.lastrowid == 1
        cur.execute("INSERT INTO t (s) VALUES ('b')")
        assert cur.lastrowid == 2
        assert conn.insert_id() == 2
    conn.close()


def test_show_statements(params, dbname):
    conn = connect(params, database=dbname, autocommit=True)
    with conn.cursor() as cur:
        cur.execute(
            "CREATE TABLE t (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,"
            " s VARCHAR(10) NOT NULL DEFAULT 'x', UNIQUE KEY us (s))"
        )
        cur.execute("SHOW CREATE TABLE t")
        name, ddl = cur.fetchone()
        assert name == "t"
        assert "ENGINE=InnoDB" in ddl
        cur.execute("DROP TABLE t")
        cur.execute(ddl)
        cur.execute("SHOW INDEX FROM t")
        assert [r[2] for r in cur.fetchall()] == ["PRIMARY", "us"]
        cur.execute("SHOW FULL COLUMNS FROM t")
        assert [r[0] for r in cur.fetchall()] == ["id", "s"]
        for stmt in ("SHOW ENGINES", "SHOW CHARACTER SET", "SHOW COLLATION", "SHOW STATUS"):
            cur.execute(stmt)
            assert cur.fetchall(), stmt
    conn.close()
