//! SHOW ENGINE INNODB STATUS over the wire, with the real mysql_async driver,
//! on RocksDB storage: a connection blocked on another's row lock shows in
//! TRANSACTIONS with the key, the table and the holder; a workload moves the
//! GROUP COMMIT and ROW OPERATIONS figures; a deadlock shows in LATEST
//! DETECTED DEADLOCK; the ROCKSDB section carries RocksDB's properties; an
//! account without PROCESS gets 1227 and an unknown engine 1286.

mod common;

use common::Server;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder};
use std::time::Duration;

fn opts(server: &Server, user: &str, password: &str) -> Opts {
    OptsBuilder::default()
        .ip_or_hostname("127.0.0.1")
        .tcp_port(server.port())
        .user(Some(user))
        .pass(Some(password))
        .prefer_socket(false)
        .into()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// The report's text, checking MySQL's shape: one row (Type, Name, Status).
async fn report(conn: &mut Conn) -> String {
    let rows: Vec<(String, String, String)> = conn
        .query("SHOW ENGINE INNODB STATUS")
        .await
        .expect("SHOW ENGINE INNODB STATUS");
    assert_eq!(rows.len(), 1);
    let (ty, name, status) = rows.into_iter().next().expect("one row");
    assert_eq!((ty.as_str(), name.as_str()), ("InnoDB", ""));
    status
}

/// The report, polled until it contains `what` (or 10 s passed).
async fn report_with(conn: &mut Conn, what: &str) -> String {
    let mut r = report(conn).await;
    for _ in 0..400 {
        if r.contains(what) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
        r = report(conn).await;
    }
    assert!(r.contains(what), "{what:?} never showed in:\n{r}");
    r
}

/// The number after `label` in the report (up to the next `,` or line end).
fn figure(report: &str, label: &str) -> u64 {
    report
        .split(label)
        .nth(1)
        .and_then(|t| t.trim_start().split([',', '\n', ' ']).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {label:?} in:\n{report}"))
}

#[test]
fn show_engine_innodb_status_reports_waits_deadlocks_and_commits() {
    let server = Server::start();
    runtime().block_on(async {
        let pw = server.password().to_string();
        let mut a = Conn::new(opts(&server, "root", &pw)).await.expect("a");
        let mut b = Conn::new(opts(&server, "root", &pw)).await.expect("b");
        let mut c = Conn::new(opts(&server, "root", &pw)).await.expect("c");
        a.query_drop("CREATE DATABASE es").await.expect("create");
        a.query_drop("CREATE TABLE es.t (id INT PRIMARY KEY, v INT)")
            .await
            .expect("create table");

        // A workload: the group commit and row counters move.
        let r0 = report(&mut c).await;
        for i in 0..40 {
            a.query_drop(format!("INSERT INTO es.t VALUES ({i}, {i})"))
                .await
                .expect("insert");
        }
        a.query_drop("UPDATE es.t SET v = v + 1 WHERE id < 10")
            .await
            .expect("update");
        a.query_drop("DELETE FROM es.t WHERE id >= 30")
            .await
            .expect("delete");
        let _: Vec<(i64, i64)> = a.query("SELECT * FROM es.t").await.expect("select");
        let r1 = report(&mut c).await;
        let delta = |label: &str| figure(&r1, label) - figure(&r0, label);
        assert!(delta("Commits written ") >= 42, "{r1}");
        assert!(delta("sync rounds ") >= 1, "{r1}");
        assert!(figure(&r1, "Sync time ") > 0, "{r1}");
        assert_eq!(delta("Number of rows inserted "), 40, "{r1}");
        assert_eq!(delta("updated "), 10, "{r1}");
        assert_eq!(delta("deleted "), 10, "{r1}");
        assert!(delta(", read ") >= 30, "{r1}");
        assert!(
            figure(&r1, "Log sequence number") >= figure(&r0, "Log sequence number") + 42,
            "{r1}"
        );
        for line in [
            "Storage: rocksdb",
            "Estimated keys: meta ",
            "Compaction pending ",
            "Files per level (rows): ",
            "rocksdb.stats (rows):",
            "queries inside InnoDB, 0 queries in queue",
            "read views open inside InnoDB",
            "Row cache hits ",
            "END OF INNODB MONITOR OUTPUT",
        ] {
            assert!(r1.contains(line), "{line:?} missing from:\n{r1}");
        }

        // A lock wait: b's UPDATE waits for the row a holds.
        let b_id = b.id();
        a.query_drop("BEGIN").await.expect("begin");
        a.query_drop("UPDATE es.t SET v = 100 WHERE id = 1")
            .await
            .expect("a locks row 1");
        let waiter = tokio::spawn(async move {
            b.query_drop("BEGIN").await.expect("b begins");
            b.query_drop("UPDATE es.t SET v = 200 WHERE id = 2")
                .await
                .expect("b locks row 2");
            let r = b.query_drop("UPDATE es.t SET v = 201 WHERE id = 1").await;
            (b, r)
        });
        let r = report_with(&mut c, "LOCK WAIT").await;
        for line in [
            format!("MySQL thread id {b_id}, "),
            "UPDATE es.t SET v = 201 WHERE id = 1".into(),
            "FOR THIS LOCK TO BE GRANTED:".into(),
            "RECORD LOCKS index PRIMARY of table `es`.`t`".into(),
            "locks rec but not gap waiting\nRecord lock, key 1".into(),
            format!("(MySQL thread id {}), waiting ", a.id()),
        ] {
            assert!(r.contains(&line), "{line:?} missing from:\n{r}");
        }

        // a asks for row 2, b's: the cycle is closed, a is the victim.
        let e = a
            .query_drop("UPDATE es.t SET v = 101 WHERE id = 2")
            .await
            .expect_err("a deadlock");
        match e {
            mysql_async::Error::Server(s) => assert_eq!(s.code, 1213, "{s:?}"),
            other => panic!("{other:?}"),
        }
        let (mut b, r) = waiter.await.expect("b's task");
        r.expect("b gets row 1 once a is rolled back");
        b.query_drop("COMMIT").await.expect("b commits");
        let r = report(&mut c).await;
        assert_eq!(figure(&r, "Deadlocks detected "), 1, "{r}");
        let d = r
            .split("LATEST DETECTED DEADLOCK")
            .nth(1)
            .and_then(|t| t.split("TRANSACTIONS\n").next())
            .unwrap_or_else(|| panic!("no deadlock section in:\n{r}"));
        for line in [
            "*** (1) TRANSACTION:",
            "*** (1) HOLDS THE LOCK(S):",
            "of table `es`.`t` trx id",
            "locks rec but not gap\nRecord lock, key 1",
            "*** (1) WAITING FOR THIS LOCK TO BE GRANTED:",
            "locks rec but not gap waiting\nRecord lock, key 2",
            "*** (2) TRANSACTION:",
            "*** (2) WAITING FOR THIS LOCK TO BE GRANTED:",
            "*** WE ROLL BACK TRANSACTION (1)",
        ] {
            assert!(d.contains(line), "{line:?} missing from:\n{r}");
        }
        assert!(!r.contains("LOCK WAIT"), "no wait is left:\n{r}");

        // The other forms, and the errors.
        let mutex: Vec<(String, String, String)> =
            c.query("SHOW ENGINE INNODB MUTEX").await.expect("mutex");
        assert!(mutex.is_empty());
        match c.query_drop("SHOW ENGINE NOSUCH STATUS").await {
            Err(mysql_async::Error::Server(s)) => {
                assert_eq!(s.code, 1286, "{s:?}");
                assert_eq!(s.message, "Unknown storage engine 'NOSUCH'");
            }
            other => panic!("{other:?}"),
        }
        c.query_drop("CREATE USER 'plain'@'%' IDENTIFIED BY 'pw'")
            .await
            .expect("create user");
        let mut plain = Conn::new(opts(&server, "plain", "pw"))
            .await
            .expect("plain connects");
        match plain.query_drop("SHOW ENGINE INNODB STATUS").await {
            Err(mysql_async::Error::Server(s)) => assert_eq!(s.code, 1227, "{s:?}"),
            other => panic!("{other:?}"),
        }
        drop(plain.disconnect().await);
        drop(a.disconnect().await);
        drop(b.disconnect().await);
        drop(c.disconnect().await);
    });
}
