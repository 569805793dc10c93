//! SHOW [GLOBAL | SESSION] STATUS over the wire, with the real mysql_async
//! driver: the counters move by exactly what the connections did.
//!
//! Covers: Com_select / Com_insert / Questions in session scope, counted once
//! per statement; prepared statements (Com_stmt_prepare / execute / close);
//! Bytes_received / Bytes_sent growing; a second connection's work in GLOBAL
//! but not in the first's SESSION scope, and kept in GLOBAL after it
//! disconnects; Threads_connected / Connections / Max_used_connections;
//! Aborted_connects after a wrong password; Handler_commit / Handler_rollback;
//! FLUSH STATUS resetting the session scope only; the row cache's
//! Canyon_row_cache_* figures moving with point reads; Canyon_dead_runs;
//! Canyon_history_* holding old versions for an open snapshot and dropping to
//! zero once GC frees them.

mod common;

use common::Server;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder};
use std::collections::HashMap;

fn opts(server: &Server, password: &str) -> Opts {
    OptsBuilder::default()
        .ip_or_hostname("127.0.0.1")
        .tcp_port(server.port())
        .user(Some("root"))
        .pass(Some(password))
        .prefer_socket(false)
        .into()
}

async fn status(conn: &mut Conn, scope: &str) -> HashMap<String, u64> {
    let rows: Vec<(String, String)> = conn
        .query(format!("SHOW {scope} STATUS"))
        .await
        .expect("SHOW STATUS");
    rows.into_iter()
        // Semi-synchronous replication's status is ON / OFF, as MySQL's.
        .filter(|(k, _)| !(k.starts_with("Rpl_semi_sync_") && k.ends_with("_status")))
        .map(|(k, v)| (k, v.parse().unwrap_or_else(|_| panic!("{v} is a number"))))
        .collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

#[test]
fn status_counters_move_with_the_work_done() {
    let server = Server::start();
    runtime().block_on(async {
        let mut a = Conn::new(opts(&server, server.password()))
            .await
            .unwrap_or_else(|e| panic!("connect: {e}\n{}", server.log_tail()));
        a.query_drop("CREATE DATABASE st").await.expect("create");
        a.query_drop("CREATE TABLE st.t (id INT PRIMARY KEY, v INT)")
            .await
            .expect("create table");

        // Session scope: exactly the statements this connection sent. SHOW
        // STATUS is itself a statement (Questions, Com_show_status).
        let s0 = status(&mut a, "SESSION").await;
        for i in 0..5 {
            a.query_drop(format!("INSERT INTO st.t VALUES ({i}, {i})"))
                .await
                .expect("insert");
        }
        for _ in 0..3 {
            let _: Vec<i64> = a.query("SELECT v FROM st.t").await.expect("select");
        }
        let s1 = status(&mut a, "SESSION").await;
        let d = |k: &str| s1[k] - s0[k];
        assert_eq!(d("Com_insert"), 5, "Com_insert");
        assert_eq!(d("Com_select"), 3, "Com_select");
        assert_eq!(d("Com_show_status"), 1, "Com_show_status");
        assert_eq!(d("Questions"), 9, "Questions: 5 + 3 + the SHOW");
        // Every autocommit statement that ran in a transaction commits it,
        // reads included (as InnoDB counts Handler_commit).
        assert_eq!(d("Handler_commit"), 8, "5 INSERTs + 3 SELECTs");
        assert!(
            d("Bytes_received") > 5 * 30,
            "Bytes_received {}",
            d("Bytes_received")
        );
        assert!(d("Bytes_sent") > 0, "Bytes_sent");

        // Prepared statements.
        let stmt = a
            .prep("SELECT v FROM st.t WHERE id = ?")
            .await
            .expect("prepare");
        for i in 0..4 {
            let _: Option<i64> = a.exec_first(&stmt, (i,)).await.expect("execute");
        }
        a.close(stmt).await.expect("close");
        let s2 = status(&mut a, "SESSION").await;
        assert_eq!(s2["Com_stmt_prepare"] - s1["Com_stmt_prepare"], 1);
        assert_eq!(s2["Com_stmt_execute"] - s1["Com_stmt_execute"], 4);
        assert_eq!(s2["Com_stmt_close"] - s1["Com_stmt_close"], 1);
        assert_eq!(
            s2["Com_select"] - s1["Com_select"],
            4,
            "executions count by type"
        );

        // The row cache: the INSERTs' commits cached their rows (the cache has
        // room), so every point read is a hit. Its figures are global.
        let c0 = status(&mut a, "GLOBAL").await;
        assert_eq!(c0["Canyon_row_cache_capacity"], 256 << 20, "the default");
        for _ in 0..2 {
            for i in 0..5 {
                let v: Option<i64> = a
                    .exec_first("SELECT v FROM st.t WHERE id = ?", (i,))
                    .await
                    .expect("point select");
                assert_eq!(v, Some(i));
            }
        }
        let c1 = status(&mut a, "SESSION").await;
        assert!(
            c1["Canyon_row_cache_hits"] - c0["Canyon_row_cache_hits"] >= 10,
            "hits {} -> {}",
            c0["Canyon_row_cache_hits"],
            c1["Canyon_row_cache_hits"]
        );
        assert!(c1["Canyon_row_cache_rows"] >= 5);
        assert!(c1["Canyon_row_cache_bytes"] >= 5 * 64);
        // An UPDATE goes through to the cached rows.
        a.query_drop("UPDATE st.t SET v = v * 10 WHERE id < 5")
            .await
            .expect("update");
        for i in 0..5 {
            let v: Option<i64> = a
                .exec_first("SELECT v FROM st.t WHERE id = ?", (i,))
                .await
                .expect("point select");
            assert_eq!(v, Some(i * 10));
        }

        // A queue whose head was deleted: taking its head by a locking
        // `ORDER BY id LIMIT 1` records a run of dead keys that later scans
        // skip (canyon-txn dead_runs.rs), and the answer stays right.
        assert_eq!(c1["Canyon_dead_runs"], 0);
        a.query_drop("CREATE TABLE st.q (id INT PRIMARY KEY, v INT)")
            .await
            .expect("create");
        let values: Vec<String> = (0..100).map(|i| format!("({i}, {i})")).collect();
        a.query_drop(format!("INSERT INTO st.q VALUES {}", values.join(",")))
            .await
            .expect("insert");
        for i in 0..60 {
            a.exec_drop("DELETE FROM st.q WHERE id = ?", (i,))
                .await
                .expect("delete");
        }
        for i in 60..64 {
            for _ in 0..3 {
                let head: Option<i64> = a
                    .query_first("SELECT id FROM st.q ORDER BY id LIMIT 1 FOR UPDATE")
                    .await
                    .expect("head");
                assert_eq!(head, Some(i));
            }
            a.exec_drop("DELETE FROM st.q WHERE id = ?", (i,))
                .await
                .expect("take the head");
        }
        let c2 = status(&mut a, "GLOBAL").await;
        assert_eq!(c2["Canyon_dead_runs"], 1, "{c2:?}");
        a.query_drop("INSERT INTO st.q VALUES (5, 5)")
            .await
            .expect("insert into the run");
        let head: Option<i64> = a
            .query_first("SELECT id FROM st.q ORDER BY id LIMIT 1 FOR UPDATE")
            .await
            .expect("head");
        assert_eq!(head, Some(5));

        // Old versions: an UPDATE under another connection's open snapshot
        // keeps the versions it replaced in memory (canyon-txn history.rs),
        // the snapshot reads them, and GC (every second) frees them once the
        // snapshot is gone.
        let mut h = Conn::new(opts(&server, server.password()))
            .await
            .expect("h");
        h.query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            .await
            .expect("snapshot");
        let before: Vec<i64> = h
            .query("SELECT v FROM st.t ORDER BY id")
            .await
            .expect("read");
        let v0 = status(&mut a, "GLOBAL").await;
        a.query_drop("UPDATE st.t SET v = v + 1 WHERE id < 5")
            .await
            .expect("update");
        let v1 = status(&mut a, "GLOBAL").await;
        assert!(
            v1["Canyon_history_versions"] >= v0["Canyon_history_versions"] + 5,
            "{v0:?} -> {v1:?}"
        );
        assert!(v1["Canyon_history_bytes"] > v0["Canyon_history_bytes"]);
        assert_eq!(
            v1["Canyon_history_spilled"], 0,
            "the default budget has room"
        );
        let again: Vec<i64> = h
            .query("SELECT v FROM st.t ORDER BY id")
            .await
            .expect("read");
        assert_eq!(again, before, "the snapshot reads the old versions");
        let now: Vec<i64> = a
            .query("SELECT v FROM st.t ORDER BY id")
            .await
            .expect("read");
        assert_ne!(now, before);
        h.query_drop("COMMIT").await.expect("commit");
        drop(h.disconnect().await);
        let mut freed = status(&mut a, "GLOBAL").await;
        for _ in 0..200 {
            if freed["Canyon_history_versions"] == 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            freed = status(&mut a, "GLOBAL").await;
        }
        assert_eq!(
            (
                freed["Canyon_history_versions"],
                freed["Canyon_history_bytes"]
            ),
            (0, 0),
            "GC frees old versions no snapshot needs"
        );
        let s2 = status(&mut a, "SESSION").await;

        // A second connection: its work shows in GLOBAL, not in a's SESSION.
        let g0 = status(&mut a, "GLOBAL").await;
        let mut b = Conn::new(opts(&server, server.password()))
            .await
            .expect("b");
        b.query_drop("BEGIN").await.expect("begin");
        b.query_drop("UPDATE st.t SET v = v + 1")
            .await
            .expect("update");
        b.query_drop("ROLLBACK").await.expect("rollback");
        let mid = status(&mut a, "GLOBAL").await;
        assert_eq!(mid["Threads_connected"], g0["Threads_connected"] + 1);
        assert_eq!(mid["Connections"], g0["Connections"] + 1);
        assert!(mid["Max_used_connections"] >= 2);
        drop(b.disconnect().await);
        // The client's COM_QUIT returns before the server has closed b's
        // session (as in MySQL), so wait for Threads_connected to come down.
        let mut g1 = status(&mut a, "GLOBAL").await;
        for _ in 0..200 {
            if g1["Threads_connected"] == g0["Threads_connected"] {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
            g1 = status(&mut a, "GLOBAL").await;
        }
        let s3 = status(&mut a, "SESSION").await;
        assert_eq!(
            g1["Com_update"] - g0["Com_update"],
            1,
            "b's UPDATE, after b left"
        );
        assert_eq!(g1["Com_begin"] - g0["Com_begin"], 1);
        // (The driver's connect-time queries may add failed statements,
        // each rolled back.)
        assert!(g1["Handler_rollback"] > g0["Handler_rollback"]);
        assert_eq!(
            s3["Com_update"], s2["Com_update"],
            "not in a's session scope"
        );
        assert_eq!(g1["Threads_connected"], g0["Threads_connected"]);

        // Exactly one rollback in this session's scope.
        a.query_drop("BEGIN").await.expect("begin");
        a.query_drop("INSERT INTO st.t VALUES (100, 0)")
            .await
            .expect("insert");
        a.query_drop("ROLLBACK").await.expect("rollback");
        let s3b = status(&mut a, "SESSION").await;
        assert_eq!(s3b["Handler_rollback"] - s3["Handler_rollback"], 1);
        assert_eq!(s3b["Com_rollback"] - s3["Com_rollback"], 1);

        // A failed login.
        let bad = Conn::new(opts(&server, "wrong")).await;
        assert!(bad.is_err(), "a wrong password is refused");
        // The server counts the failure after sending the error the client
        // has just read, so give it a moment.
        let mut g2 = status(&mut a, "GLOBAL").await;
        for _ in 0..200 {
            if g2["Aborted_connects"] > g1["Aborted_connects"] {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
            g2 = status(&mut a, "GLOBAL").await;
        }
        assert_eq!(g2["Aborted_connects"], g1["Aborted_connects"] + 1);

        // FLUSH STATUS: the session restarts from zero, GLOBAL keeps its totals.
        a.query_drop("FLUSH STATUS").await.expect("flush");
        let s4 = status(&mut a, "SESSION").await;
        let g3 = status(&mut a, "GLOBAL").await;
        assert_eq!(s4["Com_insert"], 0, "session Com_insert after FLUSH STATUS");
        assert_eq!(s4["Questions"], 1, "only the SHOW after the FLUSH");
        assert!(g3["Com_insert"] >= g2["Com_insert"]);
        assert!(g3["Questions"] > g2["Questions"]);

        // long_query_time = 0: every statement is slow.
        a.query_drop("SET long_query_time = 0").await.expect("set");
        let _: Vec<i64> = a.query("SELECT 1").await.expect("select");
        let s5 = status(&mut a, "SESSION").await;
        assert!(
            s5["Slow_queries"] >= 1,
            "Slow_queries {}",
            s5["Slow_queries"]
        );

        // LIKE filters by name.
        let rows: Vec<(String, String)> =
            a.query("SHOW STATUS LIKE 'Com_stmt%'").await.expect("like");
        let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(
            names,
            ["Com_stmt_close", "Com_stmt_execute", "Com_stmt_prepare"]
        );
        drop(a.disconnect().await);
    });
}

/// InnoDB's row lock figures: a prepared UPDATE (awaiting its lock without a
/// thread) and a text UPDATE each wait for a row another connection holds;
/// both show in `Innodb_row_lock_current_waits` while they wait, and in
/// `Innodb_row_lock_waits` / `_time` / `_time_max` once the holder commits.
/// Each waiting statement is counted once in `Com_update`.
#[test]
fn row_lock_waits_show_in_innodb_row_lock_status() {
    let server = Server::start();
    runtime().block_on(async {
        let mut a = Conn::new(opts(&server, server.password()))
            .await
            .expect("a");
        a.query_drop("CREATE DATABASE st").await.expect("create");
        a.query_drop("CREATE TABLE st.t (id INT PRIMARY KEY, v INT)")
            .await
            .expect("create table");
        a.query_drop("INSERT INTO st.t VALUES (1, 0)")
            .await
            .expect("insert");
        let g0 = status(&mut a, "GLOBAL").await;
        assert_eq!(g0["Innodb_row_lock_waits"], 0);
        a.query_drop("BEGIN").await.expect("begin");
        a.query_drop("UPDATE st.t SET v = v + 1 WHERE id = 1")
            .await
            .expect("a locks row 1");
        let mut waiters = Vec::new();
        for prepared in [true, false] {
            let mut c = Conn::new(opts(&server, server.password()))
                .await
                .expect("waiter");
            waiters.push(tokio::spawn(async move {
                let sql = "UPDATE st.t SET v = v * 10 WHERE id = 1";
                if prepared {
                    c.exec_drop(sql, ()).await.expect("prepared update");
                } else {
                    c.query_drop(sql).await.expect("text update");
                }
                let s = status(&mut c, "SESSION").await;
                s["Com_update"]
            }));
        }
        let mut g = status(&mut a, "GLOBAL").await;
        for _ in 0..400 {
            if g["Innodb_row_lock_current_waits"] == 2 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
            g = status(&mut a, "GLOBAL").await;
        }
        assert_eq!(g["Innodb_row_lock_current_waits"], 2, "{g:?}");
        assert_eq!(g["Innodb_row_lock_waits"], 2);
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        a.query_drop("COMMIT").await.expect("commit");
        for w in waiters {
            assert_eq!(w.await.expect("the waiter ends"), 1, "Com_update once");
        }
        let g1 = status(&mut a, "GLOBAL").await;
        assert_eq!(g1["Innodb_row_lock_current_waits"], 0);
        assert_eq!(g1["Innodb_row_lock_waits"], 2);
        assert!(
            g1["Innodb_row_lock_time_max"] >= 200 && g1["Innodb_row_lock_time"] >= 400,
            "{g1:?}"
        );
        assert!(g1["Innodb_row_lock_time_avg"] >= 200);
        let v: Option<i64> = a
            .query_first("SELECT v FROM st.t WHERE id = 1")
            .await
            .expect("read");
        assert_eq!(v, Some(100), "(0 + 1) * 10 * 10: both ran after a's commit");
        drop(a.disconnect().await);
    });
}
