//! `read_only` / `super_read_only` set in the configuration file, over the
//! wire (issue 25): the server starts super-read-only, refuses root's DDL
//! with 1290 (SQLSTATE HY000, MySQL's text), lets SUPER write once only
//! read_only is left, refuses an account without SUPER, and starts
//! read-only again after a restart (SET GLOBAL is not kept). The rules
//! themselves are tested in canyon-sql's `tests/read_only.rs`.

mod common;

use common::client::Client;
use common::{Server, ServerOptions};

fn scalar(c: &mut Client, sql: &str) -> String {
    c.exec(sql).scalar().unwrap_or_default()
}

fn levels(c: &mut Client) -> Vec<Option<String>> {
    c.exec("SELECT @@global.read_only, @@global.super_read_only")
        .rows()
        .remove(0)
}

fn on(v: &str) -> Option<String> {
    Some(v.to_string())
}

#[test]
fn read_only_from_the_configuration_over_the_wire() {
    let mut s = Server::start_with(ServerOptions {
        extra_toml: "super_read_only = true\n".into(),
        ..ServerOptions::default()
    });
    let mut root = s.client();
    assert_eq!(levels(&mut root), vec![on("1"), on("1")]);
    let e = root.expect_err("CREATE DATABASE d");
    assert_eq!((e.errno, e.sqlstate.as_str()), (1290, "HY000"));
    assert_eq!(
        e.message,
        "The MySQL server is running with the --super-read-only option so it cannot execute \
         this statement"
    );
    root.exec("SET GLOBAL super_read_only = 0");
    assert_eq!(levels(&mut root), vec![on("1"), on("0")]);
    // SUPER writes under read_only.
    root.exec("CREATE DATABASE d");
    root.exec("CREATE TABLE d.t (id INT PRIMARY KEY)");
    root.exec("CREATE USER 'w'@'%' IDENTIFIED BY 'pw'");
    root.exec("GRANT ALL ON d.* TO 'w'@'%'");
    let mut w = Client::connect(s.port(), "w", "pw").expect("w logs in");
    let e = w.expect_err("INSERT INTO d.t VALUES (1)");
    assert_eq!((e.errno, e.sqlstate.as_str()), (1290, "HY000"));
    assert!(e.message.contains("--read-only option"), "{}", e.message);
    assert_eq!(w.expect_err("SET GLOBAL read_only = 0").errno, 1227);
    w.exec("CREATE TEMPORARY TABLE d.tmp (a INT)");
    w.exec("INSERT INTO d.tmp VALUES (1)");
    root.exec("SET GLOBAL read_only = OFF");
    w.exec("INSERT INTO d.t VALUES (1)");
    assert_eq!(scalar(&mut w, "SELECT COUNT(*) FROM d.t"), "1");
    // The configuration's level again after a restart.
    drop(w);
    drop(root);
    s.restart();
    let mut root = s.client();
    assert_eq!(levels(&mut root), vec![on("1"), on("1")]);
    assert_eq!(root.expect_err("INSERT INTO d.t VALUES (2)").errno, 1290);
    assert_eq!(scalar(&mut root, "SELECT COUNT(*) FROM d.t"), "1");
}
