//! The statements of issue 22 that aborted the whole server, sent as the issue
//! sent them: with the stock `mariadb` CLI, by an account with no privileges.
//! Each gets its result or a MySQL error; after each the server is running and
//! a new connection is served; at the end the server has printed no panic and
//! no stack overflow. (The limits themselves are searched in-process by
//! canyon-sql's `tests/limits.rs`; this is the same path over the wire.)

mod common;

use common::{find_program, run_bounded, Server, ServerOptions, CLIENT_TIMEOUT};
use std::process::Command;

/// Runs `sql` through the real `mariadb` CLI as the unprivileged account `u`.
fn cli(server: &Server, sql: &str) -> (String, String) {
    let mut cmd = Command::new(find_program("mariadb").expect("the mariadb client is installed"));
    cmd.arg("--no-defaults")
        .arg("--protocol=TCP")
        .arg("-h127.0.0.1")
        .arg(format!("-P{}", server.port()))
        .arg("-uu")
        .arg("-ppw")
        .arg("--batch")
        .arg("--skip-column-names")
        .arg("-A")
        .arg("--connect-timeout=30");
    let out = run_bounded(&mut cmd, &format!("{sql};\n"), CLIENT_TIMEOUT);
    (out.stdout, out.stderr)
}

fn chain(first: &str, sep: &str, n: usize) -> String {
    vec![first; n + 1].join(sep)
}

/// After a hostile statement: the process runs and a new connection answers.
fn still_serves(server: &mut Server) {
    server.assert_running();
    let (out, err) = cli(server, "SELECT 1");
    assert_eq!(
        out.trim(),
        "1",
        "SELECT 1 after it: {err}\n{}",
        server.log_tail()
    );
}

#[test]
fn issue_statements_get_answers_not_crashes() {
    if common::skip_without("mariadb") {
        return;
    }
    let mut server = Server::start_with(ServerOptions {
        in_memory: true,
        ..Default::default()
    });
    let mut root = server.client();
    root.exec("CREATE USER 'u'@'%' IDENTIFIED BY 'pw'");

    // Set operations: MariaDB returns the rows of a 2,400-term chain; so does
    // Canyon (the chain overflowed the stack before).
    let union = chain("SELECT 1", " UNION ALL ", 2_400);
    let (out, err) = cli(&server, &union);
    assert_eq!(out.lines().count(), 2_401, "UNION ALL: {err}");
    still_serves(&mut server);
    let (out, err) = cli(&server, &chain("SELECT 1", " INTERSECT ", 2_400));
    assert_eq!(out.trim(), "1", "INTERSECT: {err}");
    let (out, err) = cli(&server, &chain("SELECT 1", " EXCEPT ", 2_400));
    assert_eq!(out.trim(), "", "EXCEPT: {err}");
    assert!(err.is_empty(), "EXCEPT: {err}");
    still_serves(&mut server);

    // 800 chained WITH elements: 4003, as MariaDB.
    let mut with = "WITH c0 AS (SELECT 1 AS x)".to_string();
    for i in 1..800 {
        with.push_str(&format!(", c{i} AS (SELECT x FROM c{})", i - 1));
    }
    with.push_str(" SELECT x FROM c799");
    let (_, err) = cli(&server, &with);
    assert!(err.contains("ERROR 4003"), "WITH: {err}");
    still_serves(&mut server);

    // 135,000-term chains: "nested too deeply" (1064), and the statement's
    // tree is taken apart without overflowing the stack.
    for sep in ["+", " AND ", " OR "] {
        let (_, err) = cli(&server, &format!("SELECT {}", chain("1", sep, 135_000)));
        assert!(
            err.contains("ERROR 1064") && err.contains("nested too deeply"),
            "{sep:?}: {err}"
        );
        still_serves(&mut server);
    }

    // Text that once panicked the keyword matcher.
    let (out, err) = cli(&server, "/*ñ*/ SELECT 1");
    assert_eq!(out.trim(), "1", "{err}");
    let (_, err) = cli(&server, "éé");
    assert!(err.contains("ERROR 1064"), "{err}");
    still_serves(&mut server);

    assert!(
        server.alarms().is_empty(),
        "the server reported: {:?}",
        server.alarms()
    );
}
