//! Checks the test harness itself against a real MariaDB 10.11: the hand-written
//! protocol client in `common::client`, the `Mariadb` guard and the `mariadb` CLI
//! wrapper. If these fail, every other integration test's verdict is suspect, so
//! they run first against a server whose behaviour is known.

mod common;

use common::client::{Client, Connect, Param, QueryOutcome};
use common::{mariadb_cli, Mariadb};

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

#[test]
fn client_against_mariadb() {
    let Some(db) = Mariadb::start() else { return };
    let mut c = db.client();
    assert!(
        c.greeting.server_version.contains("MariaDB"),
        "greeting: {:?}",
        c.greeting
    );
    assert_eq!(c.greeting.scramble.len(), 20, "scramble length");

    // Text protocol: OK packets, affected rows, last insert id, NULLs, ordering.
    c.exec("CREATE DATABASE harness");
    c.init_db("harness").expect("COM_INIT_DB");
    c.exec(
        "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20), \
         d DECIMAL(10,2), f DOUBLE, day DATE, at DATETIME, u BIGINT UNSIGNED, n TINYINT)",
    );
    let ok = c.exec(
        "INSERT INTO t (v, d, f, day, at, u, n) VALUES \
         ('a', 1.50, 0.25, '2024-02-29', '2024-02-29 23:59:58', 18446744073709551615, -128), \
         (NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    );
    assert_eq!(
        ok,
        QueryOutcome::Ok {
            affected_rows: 2,
            last_insert_id: 1
        }
    );
    let rows = c
        .exec("SELECT id, v, d, f, day, at, u, n FROM t ORDER BY id")
        .rows();
    assert_eq!(
        rows,
        vec![
            vec![
                s("1"),
                s("a"),
                s("1.50"),
                s("0.25"),
                s("2024-02-29"),
                s("2024-02-29 23:59:58"),
                s("18446744073709551615"),
                s("-128")
            ],
            vec![s("2"), None, None, None, None, None, None, None],
        ]
    );
    assert_eq!(c.exec("SELECT COUNT(*) FROM t").scalar(), s("2"));
    c.ping().expect("COM_PING");

    // Errors carry errno and SQLSTATE.
    let e = c.expect_err("SELEC 1");
    assert_eq!((e.errno, e.sqlstate.as_str()), (1064, "42000"), "{e}");
    let e = c.expect_err("SELECT * FROM nope");
    assert_eq!((e.errno, e.sqlstate.as_str()), (1146, "42S02"), "{e}");
    let e = c.expect_err("SELECT nope FROM t");
    assert_eq!((e.errno, e.sqlstate.as_str()), (1054, "42S22"), "{e}");
    let e = c.init_db("no_such_db").expect_err("unknown database");
    assert_eq!(e.errno, 1049, "{e}");
    // The session goes on after errors.
    assert_eq!(c.exec("SELECT 1 + 1").scalar(), s("2"));

    // Prepared statements with the binary protocol.
    let p = c
        .prepare("SELECT id, v, d, f, day, at, u, n FROM t WHERE id >= ? AND v IS NOT NULL")
        .expect("prepare");
    assert_eq!((p.params, p.columns), (1, 8));
    let rows = c.execute(p.id, &[Param::Int(1)]).expect("execute").rows();
    assert_eq!(
        rows,
        vec![vec![
            s("1"),
            s("a"),
            s("1.50"),
            s("0.25"),
            s("2024-02-29"),
            s("2024-02-29 23:59:58"),
            s("18446744073709551615"),
            s("-128")
        ]]
    );
    let ins = c
        .prepare("INSERT INTO t (v, n) VALUES (?, ?)")
        .expect("prepare");
    let ok = c
        .execute(ins.id, &[Param::Str("b".into()), Param::Null])
        .expect("execute insert");
    assert_eq!(
        ok,
        QueryOutcome::Ok {
            affected_rows: 1,
            last_insert_id: 3
        }
    );
    // Too few parameters: the payload stops after the statement id and flags.
    let mut payload = common::client::stmt_execute_payload(ins.id, &[]);
    let e = c.execute_raw(&payload).expect_err("too few parameters");
    assert_eq!(e.errno, 1210, "{e}");
    // Unknown statement id.
    payload[1..5].copy_from_slice(&999_999u32.to_le_bytes());
    let e = c.execute_raw(&payload).expect_err("unknown statement");
    assert_eq!(e.errno, 1243, "{e}");
    c.close_statement(p.id).expect("close");
    c.ping().expect("ping after COM_STMT_CLOSE");

    // CLIENT_DEPRECATE_EOF and multi-statements.
    let mut opts = Connect::new(db.port(), "root", db.password());
    opts.deprecate_eof = true;
    opts.multi_statements = true;
    opts.db = Some("harness".into());
    let mut c2 = Client::connect_with(&opts).expect("connect with DEPRECATE_EOF");
    assert!(c2.capabilities() & common::client::caps::DEPRECATE_EOF != 0);
    let all = c2
        .query_multi("SELECT v FROM t WHERE id = 1; SELECT COUNT(*) FROM t; DO 1")
        .expect("multi");
    assert_eq!(
        all,
        vec![
            QueryOutcome::Rows(vec![vec![s("a")]]),
            QueryOutcome::Rows(vec![vec![s("3")]]),
            QueryOutcome::Ok {
                affected_rows: 0,
                last_insert_id: 0
            },
        ]
    );
    let echo = c2.prepare("SELECT ?").expect("prepare");
    let rows = c2
        .execute(echo.id, &[Param::Str("x".into())])
        .expect("execute with DEPRECATE_EOF")
        .rows();
    assert_eq!(rows, vec![vec![s("x")]]);

    // Wrong password.
    let e = Client::connect(db.port(), "root", "wrong")
        .err()
        .expect("bad password");
    assert_eq!((e.errno, e.sqlstate.as_str()), (1045, "28000"), "{e}");

    // The real CLI.
    let (out, err, status) = mariadb_cli(
        db.port(),
        db.password(),
        Some("harness"),
        "SELECT id, v FROM t ORDER BY id;",
    );
    assert!(status.success(), "mariadb CLI failed: {err}");
    assert_eq!(out, "id\tv\n1\ta\n2\tNULL\n3\tb\n");
}
