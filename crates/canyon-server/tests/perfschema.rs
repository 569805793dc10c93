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
