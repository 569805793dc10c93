"""mysql-connector-python against Canyon: its default caching_sha2_password
handshake (switched by the server), both the C extension if present and the pure
Python protocol, text and server-side prepared statements."""

import datetime
import decimal

import mysql.connector
import pytest
from mysql.connector import errors

TEXT = "héllo wörld – 日本語 🚀"


@pytest.fixture(params=[True, False], ids=["pure", "cext"])
def pure(request):
    if not request.param:
        try:
            import _mysql_connector  # noqa: F401
        except ImportError:
            pytest.skip("mysql-connector's C extension is not installed")
    return request.param


def connect(params, pure, **kw):
    return mysql.connector.connect(use_pure=pure, **params, **kw)


def test_connect(params, pure):
    conn = connect(params, pure)
    assert conn.is_connected()
    assert conn.get_server_info()
    cur = conn.cursor()
    cur.execute("SELECT 1 + 1")
    assert cur.fetchone() == (2,)
    cur.close()
    conn.ping(reconnect=False)
    conn.close()


def test_round_trip_text_and_prepared(params, pure, dbname):
    conn = connect(params, pure, database=dbname, autocommit=True)
    cur = conn.cursor()
    cur.execute(
        "CREATE TABLE t (id INT PRIMARY KEY, d DECIMAL(10,2), f DOUBLE,"
        " s VARCHAR(100), dt DATE, ts DATETIME, n INT)"
    )
    row = (
        1,
        decimal.Decimal("12.34"),
        1.5,
        TEXT,
        datetime.date(2024, 2, 29),
        datetime.datetime(2024, 2, 29, 13, 14, 15),
        None,
    )
    cur.execute("INSERT INTO t VALUES (%s, %s, %s, %s, %s, %s, %s)", row)
    cur.execute("SELECT id, d, f, s, dt, ts, n FROM t")
    assert cur.fetchone() == row
    cur.close()

    pcur = conn.cursor(prepared=True)
    row2 = (2,) + row[1:]
    pcur.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?)", row2)
    pcur.execute("SELECT id, d, f, s, dt, ts, n FROM t WHERE id = ?", (2,))
    assert tuple(pcur.fetchone()) == row2
    pcur.execute("SELECT COUNT(*) FROM t WHERE s = ?", (TEXT,))
    assert tuple(pcur.fetchone()) == (2,)
    pcur.close()
    conn.close()


def test_executemany(params, pure, dbname):
    conn = connect(params, pure, database=dbname, autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20))")
    cur.executemany("INSERT INTO t (id, s) VALUES (%s, %s)", [(i, f"v{i}") for i in range(10)])
    assert cur.rowcount == 10
    pcur = conn.cursor(prepared=True)
    pcur.executemany("INSERT INTO t (id, s) VALUES (?, ?)", [(i, f"w{i}") for i in range(10, 15)])
    pcur.close()
    cur.execute("SELECT COUNT(*) FROM t")
    assert cur.fetchone() == (15,)
    cur.close()
    conn.close()


def test_transactions(params, pure, dbname):
    conn = connect(params, pure, database=dbname)
    assert not conn.autocommit
    cur = conn.cursor()
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    cur.execute("INSERT INTO t VALUES (1)")
    conn.commit()
    cur.execute("INSERT INTO t VALUES (2)")
    conn.rollback()
    conn.start_transaction()
    cur.execute("INSERT INTO t VALUES (3)")
    conn.commit()
    cur.execute("SELECT id FROM t ORDER BY id")
    assert cur.fetchall() == [(1,), (3,)]
    cur.close()
    conn.close()


def test_errors(params, pure, dbname):
    conn = connect(params, pure, database=dbname, autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    cur.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(errors.IntegrityError) as e:
        cur.execute("INSERT INTO t VALUES (1)")
    assert e.value.errno == 1062
    assert e.value.sqlstate == "23000"
    with pytest.raises(errors.ProgrammingError) as e:
        cur.execute("SELEC 1")
    assert e.value.errno == 1064
    pcur = conn.cursor(prepared=True)
    with pytest.raises(errors.IntegrityError) as e:
        pcur.execute("INSERT INTO t VALUES (?)", (1,))
    assert e.value.errno == 1062
    pcur.close()
    cur.execute("SELECT 1")
    assert cur.fetchone() == (1,)
    cur.close()
    conn.close()


def test_lastrowid(params, pure, dbname):
    conn = connect(params, pure, database=dbname, autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, s VARCHAR(10))")
    cur.execute("INSERT INTO t (s) VALUES ('a')")
    assert cur.lastrowid == 1
    cur.execute("INSERT INTO t (s) VALUES ('b')")
    assert cur.lastrowid == 2
    cur.close()
    conn.close()
