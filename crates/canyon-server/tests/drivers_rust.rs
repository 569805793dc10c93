//! The real Rust driver against a real server: mysql_async 0.37 (the workspace's
//! version, also canyon-bench's driver), with no extra features, so values are
//! checked as they come off the wire (`Value::Bytes` for text-protocol cells and
//! DECIMAL, `Value::Int` / `Value::Date` for binary-protocol cells).
//!
//! Covers: the handshake and the driver's connect-time statements; text queries;
//! prepared statements (COM_STMT_PREPARE / EXECUTE) with NULL, integers,
//! 4-byte UTF-8, DECIMAL, DATE / DATETIME and blob parameters, re-executed;
//! transactions committed and rolled back; errors by code (1062, 1146, 1064);
//! last_insert_id and affected rows.
//!
//! mysql_async is a Cargo dependency, so this test never skips.

mod common;

use common::Server;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder, Row, TxOpts, Value};

/// Emoji and other 4-byte UTF-8 characters: utf8mb4 all the way through.
const TEXT: &str = "héllo wörld – 日本語 🚀🦀 𝄞";

fn opts(server: &Server, db: Option<&str>) -> Opts {
    OptsBuilder::default()
        .ip_or_hostname("127.0.0.1")
        .tcp_port(server.port())
        .user(Some("root"))
        .pass(Some(server.password()))
        .db_name(db)
        .prefer_socket(false)
        .into()
}

/// A connection with `db` created and selected.
async fn connect_db(server: &Server, db: &str) -> Conn {
    let mut conn = Conn::new(opts(server, None))
        .await
        .unwrap_or_else(|e| panic!("connect: {e}\n{}", server.log_tail()));
    conn.query_drop(format!("CREATE DATABASE {db}"))
        .await
        .expect("CREATE DATABASE");
    conn.query_drop(format!("USE {db}")).await.expect("USE");
    conn
}

/// The server error code of a failed call; panics on success or a non-server error.
fn server_code<T: std::fmt::Debug>(r: mysql_async::Result<T>) -> (u16, String) {
    match r {
        Err(mysql_async::Error::Server(e)) => (e.code, e.state),
        other => panic!("expected a server error, got {other:?}"),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

#[test]
fn rust_mysql_async_text_protocol() {
    let server = Server::start();
    runtime().block_on(async {
        let mut conn = Conn::new(opts(&server, None))
            .await
            .unwrap_or_else(|e| panic!("connect: {e}\n{}", server.log_tail()));
        assert!(conn.server_version().0 >= 8, "{:?}", conn.server_version());
        conn.ping().await.expect("COM_PING");

        // Text results: every cell is bytes (or NULL).
        let row: Row = conn
            .query_first("SELECT 1 + 1, 'x', NULL, @@autocommit")
            .await
            .expect("SELECT")
            .expect("one row");
        assert_eq!(row.as_ref(0), Some(&Value::Bytes(b"2".to_vec())));
        assert_eq!(row.as_ref(1), Some(&Value::Bytes(b"x".to_vec())));
        assert_eq!(row.as_ref(2), Some(&Value::NULL));
        assert_eq!(row.get::<i64, _>(3), Some(1));
        let cols: Vec<String> = row
            .columns_ref()
            .iter()
            .map(|c| c.name_str().into_owned())
            .collect();
        assert_eq!(cols[0], "1 + 1");

        // NOW() has no fractional seconds unless asked for (NOW(fsp)), as in MySQL.
        let lens: Option<(i64, i64)> = conn
            .query_first("SELECT LENGTH(NOW()), LENGTH(CURRENT_TIMESTAMP)")
            .await
            .expect("LENGTH(NOW())");
        assert_eq!(lens, Some((19, 19)));

        conn.query_drop("CREATE DATABASE rs_text")
            .await
            .expect("CREATE DATABASE");
        conn.query_drop("USE rs_text").await.expect("USE");
        conn.query_drop(
            "CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, s VARCHAR(64) NOT NULL, \
             n INT, UNIQUE KEY uk_s (s))",
        )
        .await
        .expect("CREATE TABLE");

        // affected rows and last_insert_id of a multi-row INSERT: the first id.
        conn.query_drop("INSERT INTO t (s, n) VALUES ('a', 1), ('b', 2), ('c', NULL)")
            .await
            .expect("INSERT");
        assert_eq!(conn.affected_rows(), 3);
        assert_eq!(conn.last_insert_id(), Some(1));
        conn.query_drop(format!("INSERT INTO t (s) VALUES ('{TEXT}')"))
            .await
            .expect("INSERT emoji");
        assert_eq!(conn.last_insert_id(), Some(4));
        let id: Option<u64> = conn
            .query_first("SELECT LAST_INSERT_ID()")
            .await
            .expect("LAST_INSERT_ID()");
        assert_eq!(id, Some(4));

        conn.query_drop("UPDATE t SET n = 10 WHERE n IS NOT NULL")
            .await
            .expect("UPDATE");
        assert_eq!(conn.affected_rows(), 2);
        // MySQL counts changed rows, not matched ones (no CLIENT_FOUND_ROWS).
        conn.query_drop("UPDATE t SET n = 10 WHERE id = 1")
            .await
            .expect("UPDATE");
        assert_eq!(conn.affected_rows(), 0);

        let rows: Vec<(i64, String, Option<i64>)> = conn
            .query("SELECT id, s, n FROM t ORDER BY id")
            .await
            .expect("SELECT");
        assert_eq!(
            rows,
            vec![
                (1, "a".into(), Some(10)),
                (2, "b".into(), Some(10)),
                (3, "c".into(), None),
                (4, TEXT.into(), None),
            ]
        );
        let len: Option<(i64, i64)> = conn
            .query_first("SELECT CHAR_LENGTH(s), LENGTH(s) FROM t WHERE id = 4")
            .await
            .expect("CHAR_LENGTH");
        let expected = (TEXT.chars().count() as i64, TEXT.len() as i64);
        assert_eq!(len, Some(expected));

        // Errors carry MySQL's codes and SQLSTATEs.
        let (code, state) = server_code(conn.query_drop("INSERT INTO t (s) VALUES ('a')").await);
        assert_eq!((code, state.as_str()), (1062, "23000"));
        let (code, state) = server_code(conn.query_drop("SELECT * FROM nope").await);
        assert_eq!((code, state.as_str()), (1146, "42S02"));
        let (code, state) = server_code(conn.query_drop("SELEC 1").await);
        assert_eq!((code, state.as_str()), (1064, "42000"));
        // The connection is still usable after errors.
        let n: Option<i64> = conn
            .query_first("SELECT COUNT(*) FROM t")
            .await
            .expect("COUNT");
        assert_eq!(n, Some(4));

        conn.query_drop("DROP DATABASE rs_text")
            .await
            .expect("DROP DATABASE");
        conn.disconnect().await.expect("COM_QUIT");
    });
}

#[test]
fn rust_mysql_async_prepared_statements() {
    let server = Server::start();
    runtime().block_on(async {
        let mut conn = connect_db(&server, "rs_ps").await;
        conn.query_drop(
            "CREATE TABLE v (id INT PRIMARY KEY, i BIGINT, s VARCHAR(100), d DECIMAL(12,3), \
             dt DATE, ts DATETIME, b BLOB, vb VARBINARY(16), f DOUBLE)",
        )
        .await
        .expect("CREATE TABLE");

        let blob: Vec<u8> = (0..=255u8).chain(0..=255u8).collect();
        let ins = conn
            .prep("INSERT INTO v VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
            .await
            .expect("COM_STMT_PREPARE");
        assert_eq!(ins.num_params(), 9);
        conn.exec_drop(
            &ins,
            (
                1i32,
                i64::MIN,
                TEXT,
                // DECIMAL goes as a string, as drivers send it.
                "-12345.678",
                Value::Date(2024, 2, 29, 0, 0, 0, 0),
                Value::Date(2024, 2, 29, 13, 14, 15, 0),
                blob.clone(),
                vec![0u8, 1, 0xff],
                1.5f64,
            ),
        )
        .await
        .expect("execute with values");
        assert_eq!(conn.affected_rows(), 1);
        // Re-executing the same statement: NULL in every nullable column (the
        // driver re-sends types, NULLs go in the null bitmap).
        conn.exec_drop(
            &ins,
            (
                2i32,
                Value::NULL,
                Value::NULL,
                Value::NULL,
                Value::NULL,
                Value::NULL,
                Value::NULL,
                Value::NULL,
                Value::NULL,
            ),
        )
        .await
        .expect("execute with NULLs");
        conn.exec_drop(
            &ins,
            (
                3i32,
                i64::MAX,
                "",
                "0.001",
                Value::NULL,
                Value::NULL,
                Vec::<u8>::new(),
                Value::NULL,
                -0.25f64,
            ),
        )
        .await
        .expect("execute with edge values");

        // Binary-protocol results.
        let sel = conn
            .prep("SELECT id, i, s, d, dt, ts, b, vb, f FROM v WHERE id = ?")
            .await
            .expect("prepare SELECT");
        assert_eq!(sel.num_params(), 1);
        assert_eq!(sel.num_columns(), 9);
        let row: Row = conn
            .exec_first(&sel, (1,))
            .await
            .expect("execute")
            .expect("row 1");
        assert_eq!(row.as_ref(0), Some(&Value::Int(1)));
        assert_eq!(row.as_ref(1), Some(&Value::Int(i64::MIN)));
        assert_eq!(row.get::<String, _>(2).as_deref(), Some(TEXT));
        assert_eq!(row.as_ref(3), Some(&Value::Bytes(b"-12345.678".to_vec())));
        assert_eq!(row.as_ref(4), Some(&Value::Date(2024, 2, 29, 0, 0, 0, 0)));
        assert_eq!(
            row.as_ref(5),
            Some(&Value::Date(2024, 2, 29, 13, 14, 15, 0))
        );
        assert_eq!(row.get::<Vec<u8>, _>(6), Some(blob.clone()));
        assert_eq!(row.get::<Vec<u8>, _>(7), Some(vec![0u8, 1, 0xff]));
        assert_eq!(row.get::<f64, _>(8), Some(1.5));

        let row: Row = conn
            .exec_first(&sel, (2,))
            .await
            .expect("execute")
            .expect("row 2");
        assert_eq!(row.as_ref(0), Some(&Value::Int(2)));
        for i in 1..9 {
            assert_eq!(row.as_ref(i), Some(&Value::NULL), "column {i} of row 2");
        }
        let row: Row = conn
            .exec_first(&sel, (3,))
            .await
            .expect("execute")
            .expect("row 3");
        assert_eq!(row.as_ref(1), Some(&Value::Int(i64::MAX)));
        assert_eq!(row.as_ref(2), Some(&Value::Bytes(Vec::new())));
        assert_eq!(row.as_ref(3), Some(&Value::Bytes(b"0.001".to_vec())));
        assert_eq!(row.get::<Vec<u8>, _>(6), Some(Vec::new()));
        assert_eq!(row.get::<f64, _>(8), Some(-0.25));

        // The same values through the text protocol.
        let row: Row = conn
            .query_first("SELECT i, d, dt, ts, f FROM v WHERE id = 1")
            .await
            .expect("text SELECT")
            .expect("row");
        let cell = |i: usize| match row.as_ref(i) {
            Some(Value::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
            other => panic!("column {i}: {other:?}"),
        };
        assert_eq!(cell(0), i64::MIN.to_string());
        assert_eq!(cell(1), "-12345.678");
        assert_eq!(cell(2), "2024-02-29");
        assert_eq!(cell(3), "2024-02-29 13:14:15");
        assert_eq!(cell(4), "1.5");

        // A parameter compared against a column, the statement re-executed.
        let count = conn
            .prep("SELECT COUNT(*) FROM v WHERE i > ? OR s = ?")
            .await
            .expect("prepare COUNT");
        let n: Option<i64> = conn.exec_first(&count, (0, TEXT)).await.expect("execute");
        assert_eq!(n, Some(2));
        let n: Option<i64> = conn
            .exec_first(&count, (Value::NULL, "nothing"))
            .await
            .expect("execute");
        assert_eq!(n, Some(0));

        // UPDATE / DELETE report affected rows; an auto-increment insert its id.
        conn.exec_drop("UPDATE v SET f = ? WHERE id >= ?", (2.0f64, 2))
            .await
            .expect("UPDATE");
        assert_eq!(conn.affected_rows(), 2);
        conn.query_drop("CREATE TABLE a (id INT AUTO_INCREMENT PRIMARY KEY, s VARCHAR(10))")
            .await
            .expect("CREATE TABLE a");
        let ins_a = conn
            .prep("INSERT INTO a (s) VALUES (?)")
            .await
            .expect("prepare");
        for (k, s) in ["x", "y", "z"].iter().enumerate() {
            conn.exec_drop(&ins_a, (s,)).await.expect("INSERT a");
            assert_eq!(conn.last_insert_id(), Some(k as u64 + 1));
        }
        conn.exec_drop("DELETE FROM a WHERE id < ?", (3,))
            .await
            .expect("DELETE");
        assert_eq!(conn.affected_rows(), 2);

        // Errors from a prepared statement: at prepare time and at execute time.
        let (code, _) = server_code(conn.prep("SELECT * FROM missing WHERE id = ?").await);
        assert_eq!(code, 1146);
        let (code, state) = server_code(
            conn.exec_drop(
                &ins,
                (
                    1i32,
                    0,
                    "dup",
                    "0",
                    Value::NULL,
                    Value::NULL,
                    Value::NULL,
                    Value::NULL,
                    Value::NULL,
                ),
            )
            .await,
        );
        assert_eq!((code, state.as_str()), (1062, "23000"));

        conn.close(ins).await.expect("COM_STMT_CLOSE");
        conn.close(sel).await.expect("COM_STMT_CLOSE");
        conn.query_drop("DROP DATABASE rs_ps")
            .await
            .expect("DROP DATABASE");
        conn.disconnect().await.expect("COM_QUIT");
    });
}

#[test]
fn rust_mysql_async_transactions() {
    let server = Server::start();
    runtime().block_on(async {
        let mut conn = connect_db(&server, "rs_tx").await;
        conn.query_drop("CREATE TABLE acct (id INT PRIMARY KEY, bal BIGINT NOT NULL)")
            .await
            .expect("CREATE TABLE");
        conn.query_drop("INSERT INTO acct VALUES (1, 100), (2, 100)")
            .await
            .expect("INSERT");
        let mut other = Conn::new(opts(&server, Some("rs_tx")))
            .await
            .expect("second connection");

        // Committed: visible to another session afterwards, not before.
        let mut tx = conn
            .start_transaction(TxOpts::default())
            .await
            .expect("START TRANSACTION");
        tx.exec_drop("UPDATE acct SET bal = bal - ? WHERE id = ?", (30, 1))
            .await
            .expect("debit");
        tx.exec_drop("UPDATE acct SET bal = bal + ? WHERE id = ?", (30, 2))
            .await
            .expect("credit");
        let seen: Option<i64> = other
            .query_first("SELECT bal FROM acct WHERE id = 1")
            .await
            .expect("read from the other session");
        assert_eq!(seen, Some(100), "uncommitted write visible");
        tx.commit().await.expect("COMMIT");
        let bals: Vec<(i32, i64)> = other
            .query("SELECT id, bal FROM acct ORDER BY id")
            .await
            .expect("SELECT");
        assert_eq!(bals, vec![(1, 70), (2, 130)]);

        // Rolled back: nothing changes, explicitly and by dropping the guard.
        let mut tx = conn
            .start_transaction(TxOpts::default())
            .await
            .expect("START TRANSACTION");
        tx.query_drop("DELETE FROM acct").await.expect("DELETE");
        tx.query_drop("INSERT INTO acct VALUES (3, 1)")
            .await
            .expect("INSERT");
        tx.rollback().await.expect("ROLLBACK");
        {
            let mut tx = conn
                .start_transaction(TxOpts::default())
                .await
                .expect("START TRANSACTION");
            tx.query_drop("UPDATE acct SET bal = 0")
                .await
                .expect("UPDATE");
        } // dropped without commit: mysql_async rolls back on the next use
        let bals: Vec<(i32, i64)> = conn
            .query("SELECT id, bal FROM acct ORDER BY id")
            .await
            .expect("SELECT");
        assert_eq!(bals, vec![(1, 70), (2, 130)]);

        // A read-only transaction refuses writes (1792).
        let mut ro = TxOpts::default();
        ro.with_readonly(Some(true));
        let mut tx = conn
            .start_transaction(ro)
            .await
            .expect("START TRANSACTION READ ONLY");
        let (code, _) = server_code(tx.query_drop("UPDATE acct SET bal = 1").await);
        assert_eq!(code, 1792);
        tx.rollback().await.expect("ROLLBACK");

        // Autocommit off through SET: work needs an explicit COMMIT.
        conn.query_drop("SET autocommit = 0")
            .await
            .expect("SET autocommit");
        conn.query_drop("INSERT INTO acct VALUES (4, 4)")
            .await
            .expect("INSERT");
        let n: Option<i64> = other
            .query_first("SELECT COUNT(*) FROM acct")
            .await
            .expect("COUNT");
        assert_eq!(n, Some(2));
        conn.query_drop("COMMIT").await.expect("COMMIT");
        let n: Option<i64> = other
            .query_first("SELECT COUNT(*) FROM acct")
            .await
            .expect("COUNT");
        assert_eq!(n, Some(3));

        other.disconnect().await.expect("COM_QUIT");
        conn.disconnect().await.expect("COM_QUIT");
    });
}
