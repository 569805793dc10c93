//! Table locks over the wire with the stock `mariadb` CLI: session A holds
//! FLUSH TABLES WITH READ LOCK, session B's INSERT blocks (its connection
//! awaits the wait without a thread, as a row lock wait) until A's UNLOCK
//! TABLES, then commits; meanwhile other waiting INSERTs end with 1205 at
//! their lock_wait_timeout and with 1317 at KILL QUERY. The rules themselves are tested in-process by
//! canyon-sql's `tests/table_locks.rs`.

mod common;

use common::{find_program, skip_without, Server, ServerOptions};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `mariadb` CLI session reading statements from a pipe, printing each
/// result as it comes (`--unbuffered`).
fn cli(server: &Server, sql_on_argv: Option<&str>) -> Child {
    let mut cmd = Command::new(find_program("mariadb").expect("checked by skip_without"));
    cmd.arg("--no-defaults")
        .arg("--protocol=TCP")
        .arg("-h127.0.0.1")
        .arg(format!("-P{}", server.port()))
        .arg("-uroot")
        .arg(format!("-p{}", server.password()))
        .arg("--batch")
        .arg("--skip-column-names")
        .arg("--unbuffered")
        .arg("-A")
        .arg("-Dlocks");
    if let Some(sql) = sql_on_argv {
        cmd.arg("-e").arg(sql);
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the mariadb CLI")
}

#[test]
fn an_insert_waits_for_another_clients_ftwrl_until_unlock_tables() {
    if skip_without("mariadb") {
        return;
    }
    let server = Server::start_with(ServerOptions {
        in_memory: true,
        ..Default::default()
    });
    let mut root = server.client();
    root.exec("CREATE DATABASE locks");
    root.exec("CREATE TABLE locks.t (id INT PRIMARY KEY)");

    // A takes the lock and says so.
    let mut a = cli(&server, None);
    let mut a_in = a.stdin.take().expect("piped");
    let mut a_out = BufReader::new(a.stdout.take().expect("piped"));
    writeln!(a_in, "FLUSH TABLES WITH READ LOCK; SELECT 'locked';").expect("write to A");
    let mut line = String::new();
    a_out.read_line(&mut line).expect("read A's answer");
    assert_eq!(line.trim(), "locked");

    // B's INSERT waits.
    let started = Instant::now();
    let mut b = cli(&server, Some("INSERT INTO t VALUES (1); SELECT 'inserted'"));
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        b.try_wait().expect("poll B").is_none(),
        "B's INSERT did not wait for A's lock"
    );
    assert_eq!(
        root.exec("SELECT COUNT(*) FROM locks.t")
            .scalar()
            .as_deref(),
        Some("0")
    );
    // Reads go on meanwhile; B is shown running its INSERT.
    let waiting = root
        .exec(
            "SELECT COUNT(*) FROM information_schema.processlist \
             WHERE info LIKE 'INSERT INTO t%' AND command = 'Query'",
        )
        .scalar();
    assert_eq!(waiting.as_deref(), Some("1"));

    // Other waits end at lock_wait_timeout (1205) and at KILL QUERY (1317),
    // and take nothing with them.
    let t0 = Instant::now();
    let c = cli(
        &server,
        Some("SET lock_wait_timeout = 1; INSERT INTO t VALUES (2)"),
    );
    let out = c.wait_with_output().expect("C ends");
    assert!(t0.elapsed() >= Duration::from_millis(900));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ERROR 1205"), "{err}");
    let d = cli(&server, Some("INSERT INTO t VALUES (3)"));
    let deadline = Instant::now() + Duration::from_secs(10);
    let id = loop {
        let found = root
            .exec(
                "SELECT id FROM information_schema.processlist \
                 WHERE info = 'INSERT INTO t VALUES (3)'",
            )
            .rows();
        if let Some(Some(id)) = found.into_iter().next().and_then(|r| r.into_iter().next()) {
            break id;
        }
        assert!(Instant::now() < deadline, "D's INSERT never ran");
        std::thread::sleep(Duration::from_millis(20));
    };
    root.exec(&format!("KILL QUERY {id}"));
    let out = d.wait_with_output().expect("D ends");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ERROR 1317"), "{err}");

    // A unlocks: B goes on and commits.
    writeln!(a_in, "UNLOCK TABLES; SELECT 'unlocked';").expect("write to A");
    line.clear();
    a_out.read_line(&mut line).expect("read A's answer");
    assert_eq!(line.trim(), "unlocked");
    let out = b.wait_with_output().expect("B ends");
    assert!(
        out.status.success(),
        "B failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "inserted");
    assert!(started.elapsed() >= Duration::from_millis(800));
    assert_eq!(
        root.exec("SELECT COUNT(*) FROM locks.t")
            .scalar()
            .as_deref(),
        Some("1")
    );
    drop(a_in);
    let a_status = a.wait().expect("A ends");
    assert!(a_status.success());
}
