//! performance_schema over the wire: `data_locks` / `data_lock_waits` during
//! a real blocked UPDATE (one session holds a row lock, another waits for
//! it), and digests summed over several connections, including one that
//! disconnected.

mod common;

use common::Server;
use std::time::{Duration, Instant};

fn connection_id(c: &mut common::client::Client) -> String {
    c.exec("SELECT CONNECTION_ID()")
        .scalar()
        .expect("CONNECTION_ID() is not NULL")
}

#[test]
fn lock_views_during_a_blocked_update() {
    let server = Server::start();
    let mut setup = server.client();
    setup.exec("CREATE DATABASE pl");
    setup.exec("CREATE TABLE pl.t (id INT PRIMARY KEY, v INT)");
    setup.exec("INSERT INTO pl.t VALUES (1, 0), (2, 0)");
    let mut holder = server.client();
    let holder_id = connection_id(&mut holder);
    holder.exec("BEGIN");
    holder.exec("UPDATE pl.t SET v = 1 WHERE id = 1");

    let mut waiter = server.client();
    let waiter_id = connection_id(&mut waiter);
    let worker = std::thread::spawn(move || {
        let r = waiter.query("UPDATE pl.t SET v = 2 WHERE id = 1");
        (r.err(), waiter)
    });

    // Wait until the lock wait shows.
    let deadline = Instant::now() + Duration::from_secs(20);
    let waits = loop {
        let rows = setup
            .exec(
                "SELECT requesting_thread_id, blocking_thread_id, \
                 requesting_engine_transaction_id <> blocking_engine_transaction_id, engine \
                 FROM performance_schema.data_lock_waits",
            )
            .rows();
        if !rows.is_empty() {
            break rows;
        }
        assert!(Instant::now() < deadline, "no lock wait appeared");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(
        waits,
        vec![vec![
            Some(waiter_id.clone()),
            Some(holder_id.clone()),
            Some("1".into()),
            Some("INNODB".into())
        ]]
    );
    let locks = setup
        .exec(
            "SELECT thread_id, object_schema, object_name, index_name, lock_type, lock_mode, \
             lock_status, lock_data FROM performance_schema.data_locks ORDER BY lock_status",
        )
        .rows();
    let row = |t: &str, status: &str| {
        ["pl", "t", "PRIMARY", "RECORD", "X,REC_NOT_GAP", status, "1"]
            .iter()
            .fold(vec![Some(t.to_string())], |mut v, x| {
                v.push(Some(x.to_string()));
                v
            })
    };
    assert_eq!(
        locks,
        vec![row(&holder_id, "GRANTED"), row(&waiter_id, "WAITING")]
    );
    // The lock ids of the wait are those of the two data_locks rows.
    let joined = setup
        .exec(
            "SELECT COUNT(*) FROM performance_schema.data_lock_waits w \
             JOIN performance_schema.data_locks r ON r.engine_lock_id = w.requesting_engine_lock_id \
             JOIN performance_schema.data_locks b ON b.engine_lock_id = w.blocking_engine_lock_id \
             WHERE r.lock_status = 'WAITING' AND b.lock_status = 'GRANTED'",
        )
        .scalar();
    assert_eq!(joined.as_deref(), Some("1"));
    // sys.innodb_lock_waits names both sessions and the waiter's statement.
    let sys = setup
        .exec(
            "SELECT locked_table, locked_index, waiting_pid, waiting_query, blocking_pid, \
             sql_kill_blocking_connection FROM sys.innodb_lock_waits",
        )
        .rows();
    assert_eq!(
        sys,
        vec![vec![
            Some("`pl`.`t`".into()),
            Some("PRIMARY".into()),
            Some(waiter_id.clone()),
            Some("UPDATE pl.t SET v = 2 WHERE id = 1".into()),
            Some(holder_id.clone()),
            Some(format!("KILL {holder_id}")),
        ]]
    );

    holder.exec("COMMIT");
    let (err, mut waiter) = worker.join().expect("worker thread");
    assert!(err.is_none(), "the waiter got the lock: {err:?}");
    assert_eq!(
        setup
            .exec("SELECT COUNT(*) FROM performance_schema.data_lock_waits")
            .scalar()
            .as_deref(),
        Some("0")
    );
    assert_eq!(
        waiter
            .exec("SELECT v FROM pl.t WHERE id = 1")
            .scalar()
            .as_deref(),
        Some("2")
    );
}

#[test]
fn digests_sum_over_connections() {
    let server = Server::start();
    let mut setup = server.client();
    setup.exec("CREATE DATABASE pd");
    setup.exec("CREATE TABLE pd.t (id INT PRIMARY KEY, c INT)");
    setup.exec("INSERT INTO pd.t VALUES (1, 10), (2, 20)");
    setup.exec("TRUNCATE TABLE performance_schema.events_statements_summary_by_digest");
    let mut clients: Vec<_> = (0..3).map(|_| server.client()).collect();
    for (n, c) in clients.iter_mut().enumerate() {
        c.exec("USE pd");
        for i in 0..4 {
            c.exec(&format!("SELECT c FROM t WHERE id = {}", (n + i) % 3));
        }
    }
    // One connection leaves: its counts stay.
    clients.pop().expect("three clients").quit();
    let q = "SELECT count_star, sum_rows_sent FROM performance_schema.events_statements_summary_by_digest \
             WHERE schema_name = 'pd' AND digest_text = 'SELECT `c` FROM `t` WHERE `id` = ?'";
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let rows = setup.exec(q).rows();
        // 12 statements; ids 1 and 2 exist, id 0 does not: 8 rows sent.
        if rows == vec![vec![Some("12".into()), Some("8".into())]] {
            break;
        }
        assert!(Instant::now() < deadline, "digest row: {rows:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Prepared statements count under the same digest as their text.
    let c = &mut clients[0];
    let p = c.prepare("SELECT c FROM t WHERE id = ?").expect("prepare");
    c.execute(p.id, &[common::client::Param::Int(1)])
        .expect("execute");
    let rows = setup.exec(q).rows();
    assert_eq!(rows, vec![vec![Some("13".into()), Some("9".into())]]);
}

#[test]
fn metadata_locks_show_a_granted_lock_and_a_pending_one() {
    let server = Server::start();
    let mut a = server.client();
    a.exec("CREATE DATABASE pm");
    a.exec("CREATE TABLE pm.t (id INT PRIMARY KEY)");
    let a_id = connection_id(&mut a);
    a.exec("LOCK TABLES pm.t READ");
    let mut b = server.client();
    let b_id = connection_id(&mut b);
    let worker = std::thread::spawn(move || {
        let r = b.query("LOCK TABLES pm.t WRITE");
        (r.err(), b)
    });
    let mut watch = server.client();
    let q = "SELECT object_type, object_schema, object_name, lock_type, lock_duration, \
             lock_status, owner_thread_id FROM performance_schema.metadata_locks \
             ORDER BY lock_status";
    let deadline = Instant::now() + Duration::from_secs(20);
    let rows = loop {
        let rows = watch.exec(q).rows();
        if rows.len() == 2 {
            break rows;
        }
        assert!(
            Instant::now() < deadline,
            "no pending lock appeared: {rows:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let row = |lock: &str, status: &str, id: &str| {
        ["TABLE", "pm", "t", lock, "EXPLICIT", status, id]
            .iter()
            .map(|x| Some(x.to_string()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        rows,
        vec![
            row("SHARED_READ_ONLY", "GRANTED", &a_id),
            row("SHARED_NO_READ_WRITE", "PENDING", &b_id),
        ]
    );
    a.exec("UNLOCK TABLES");
    let (err, mut b) = worker.join().expect("worker thread");
    assert!(err.is_none(), "LOCK TABLES WRITE was granted: {err:?}");
    assert_eq!(
        watch.exec(q).rows(),
        vec![row("SHARED_NO_READ_WRITE", "GRANTED", &b_id)]
    );
    b.exec("UNLOCK TABLES");
}

#[test]
fn slow_log_takes_full_scans_with_log_queries_not_using_indexes() {
    let server = Server::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("slow.log");
    let mut admin = server.client();
    admin.exec(&format!(
        "SET GLOBAL slow_query_log_file = '{}'",
        path.display()
    ));
    admin.exec("SET GLOBAL long_query_time = 10");
    admin.exec("SET GLOBAL log_queries_not_using_indexes = ON");
    admin.exec("SET GLOBAL slow_query_log = ON");
    admin.exec("CREATE DATABASE ps");
    admin.exec("CREATE TABLE ps.t (id INT PRIMARY KEY, v INT)");
    admin.exec("INSERT INTO ps.t VALUES (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (7, 7)");
    let mut c = server.client();
    c.exec("SELECT v FROM ps.t WHERE id = 3");
    c.exec("SELECT id FROM ps.t WHERE v + 1 > 0");
    let text = std::fs::read_to_string(&path).expect("the slow log");
    assert!(
        text.contains("\nSELECT id FROM ps.t WHERE v + 1 > 0;\n"),
        "the full scan is logged:\n{text}"
    );
    assert!(
        !text.contains("WHERE id = 3"),
        "the primary-key lookup is not:\n{text}"
    );
    assert!(
        text.contains("Rows_sent: 7  Rows_examined: 7\n"),
        "Rows_examined counts the rows scanned:\n{text}"
    );
    // Lock_time: a statement that waited for a row lock.
    let mut holder = server.client();
    holder.exec("BEGIN");
    holder.exec("UPDATE ps.t SET v = 0 WHERE id = 1");
    let worker = std::thread::spawn(move || {
        c.exec("UPDATE ps.t SET v = 9 WHERE v + 1 > 0");
        c
    });
    std::thread::sleep(Duration::from_millis(300));
    holder.exec("COMMIT");
    let mut c = worker.join().expect("worker thread");
    let lock: f64 = c
        .exec(
            "SELECT lock_time / 1e12 FROM performance_schema.events_statements_history \
             WHERE thread_id = CONNECTION_ID() AND sql_text LIKE 'UPDATE ps.t%'",
        )
        .scalar()
        .and_then(|v| v.parse().ok())
        .expect("the UPDATE's event");
    assert!(lock >= 0.2, "LOCK_TIME counts the wait: {lock}");
}
