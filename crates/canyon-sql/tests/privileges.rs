//! Accounts and privileges through the engine API: GRANT / REVOKE at global,
//! database and table level, SHOW GRANTS, ALTER USER / SET PASSWORD, the MySQL
//! errors a refused statement gets, and grants surviving a restart.

mod common;

use canyon_common::Error;
use canyon_sql::{Engine, QueryResult, Session, Value};
use canyon_storage::MemoryStorage;
use common::open;
use std::sync::Arc;

fn run(s: &mut Session, sql: &str) -> Result<QueryResult, Error> {
    s.execute(sql, false).pop().expect("one result")
}

fn ok(s: &mut Session, sql: &str) {
    if let Err(e) = run(s, sql) {
        panic!("{sql}: {e:?}");
    }
}

fn rows(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    match run(s, sql) {
        Ok(QueryResult::Rows { rows, .. }) => rows,
        other => panic!("{sql}: expected rows, got {other:?}"),
    }
}

fn grants(s: &mut Session, sql: &str) -> Vec<String> {
    rows(s, sql)
        .into_iter()
        .map(|r| match &r[0] {
            Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            other => panic!("{other:?}"),
        })
        .collect()
}

/// An engine with root, databases `shop` (tables `items`, `orders`) and `bank`
/// (table `acc`), and a user `u` without privileges.
fn setup() -> (Arc<MemoryStorage>, Arc<Engine>) {
    let storage = Arc::new(MemoryStorage::new());
    let e = open(&storage);
    e.bootstrap_root("").expect("root account");
    let mut root = e.session(1, "root", "localhost");
    for sql in [
        "CREATE DATABASE shop",
        "CREATE TABLE shop.items (id INT PRIMARY KEY, price INT)",
        "CREATE TABLE shop.orders (id INT PRIMARY KEY, item INT)",
        "INSERT INTO shop.items VALUES (1, 10)",
        "CREATE DATABASE bank",
        "CREATE TABLE bank.acc (id INT PRIMARY KEY)",
        "CREATE USER 'u'@'%' IDENTIFIED BY 'pw'",
    ] {
        ok(&mut root, sql);
    }
    (storage, e)
}

#[test]
fn table_level_grants_allow_exactly_their_privileges() {
    let (_s, e) = setup();
    let mut root = e.session(1, "root", "localhost");
    ok(&mut root, "GRANT SELECT, UPDATE ON shop.items TO 'u'@'%'");
    let mut u = e.session(2, "u", "h");
    ok(&mut u, "USE shop");
    assert_eq!(
        rows(&mut u, "SELECT price FROM items"),
        vec![vec![Value::Int(10)]]
    );
    ok(&mut u, "UPDATE items SET price = 11 WHERE id = 1");
    for (sql, command) in [
        ("INSERT INTO items VALUES (2, 20)", "INSERT"),
        ("DELETE FROM items", "DELETE"),
        ("SELECT * FROM orders", "SELECT"),
        ("DROP TABLE items", "DROP"),
    ] {
        match run(&mut u, sql) {
            Err(Error::TableAccessDenied { command: c, .. }) => assert_eq!(c, command, "{sql}"),
            other => panic!("{sql}: expected 1142, got {other:?}"),
        }
    }
    // No privilege on bank at all: USE is 1044.
    assert!(matches!(
        run(&mut u, "USE bank"),
        Err(Error::DbAccessDenied { .. })
    ));
    // SHOW DATABASES lists only what the account can use.
    let dbs: Vec<_> = rows(&mut u, "SHOW DATABASES")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert!(dbs.contains(&Value::str("shop")) && !dbs.contains(&Value::str("bank")));
}

#[test]
fn database_and_global_grants_and_revoke() {
    let (_s, e) = setup();
    let mut root = e.session(1, "root", "localhost");
    ok(&mut root, "GRANT SELECT, INSERT ON shop.* TO 'u'@'%'");
    ok(&mut root, "GRANT SELECT ON *.* TO 'u'@'%'");
    let mut u = e.session(2, "u", "h");
    ok(&mut u, "INSERT INTO shop.orders VALUES (1, 1)");
    ok(&mut u, "SELECT * FROM bank.acc");
    ok(&mut root, "REVOKE INSERT ON shop.* FROM 'u'@'%'");
    // The next statement sees the new snapshot: no lock, no reconnect.
    assert!(matches!(
        run(&mut u, "INSERT INTO shop.orders VALUES (2, 1)"),
        Err(Error::TableAccessDenied { .. })
    ));
    ok(&mut u, "SELECT * FROM shop.orders");
    assert_eq!(
        grants(&mut root, "SHOW GRANTS FOR 'u'@'%'"),
        vec![
            "GRANT SELECT ON *.* TO `u`@`%`",
            "GRANT SELECT ON `shop`.* TO `u`@`%`",
        ]
    );
    // REVOKE at a level without a grant: 1141.
    assert!(matches!(
        run(&mut root, "REVOKE SELECT ON bank.* FROM 'u'@'%'"),
        Err(Error::NonexistingGrant { .. })
    ));
    ok(
        &mut root,
        "REVOKE ALL PRIVILEGES, GRANT OPTION FROM 'u'@'%'",
    );
    assert_eq!(
        grants(&mut root, "SHOW GRANTS FOR 'u'@'%'"),
        vec!["GRANT USAGE ON *.* TO `u`@`%`"]
    );
    assert!(run(&mut u, "SELECT * FROM bank.acc").is_err());
}

#[test]
fn grant_option_create_user_and_refusals() {
    let (_s, e) = setup();
    let mut root = e.session(1, "root", "localhost");
    assert_eq!(
        grants(&mut root, "SHOW GRANTS"),
        vec![
            "GRANT ALL PRIVILEGES ON *.* TO `root`@`%` WITH GRANT OPTION",
            // MySQL 8 prints the dynamic privileges on a line of their own.
            "GRANT XA_RECOVER_ADMIN ON *.* TO `root`@`%` WITH GRANT OPTION",
        ]
    );
    ok(&mut root, "CREATE USER 'v'@'%'");
    ok(
        &mut root,
        "GRANT SELECT ON shop.* TO 'u'@'%' WITH GRANT OPTION",
    );
    let mut u = e.session(2, "u", "h");
    // u may pass on what it holds with the GRANT OPTION, and nothing more.
    ok(&mut u, "GRANT SELECT ON shop.items TO 'v'@'%'");
    assert!(matches!(
        run(&mut u, "GRANT INSERT ON shop.items TO 'v'@'%'"),
        Err(Error::TableAccessDenied { .. })
    ));
    assert!(matches!(
        run(&mut u, "GRANT SELECT ON bank.* TO 'v'@'%'"),
        Err(Error::DbAccessDenied { .. })
    ));
    assert!(matches!(
        run(&mut u, "CREATE USER 'w'@'%'"),
        Err(Error::SpecificAccessDenied(_))
    ));
    assert!(matches!(
        run(&mut u, "SHOW GRANTS FOR 'root'@'%'"),
        Err(Error::DbAccessDenied { .. })
    ));
    // Wrong levels and unknown accounts.
    assert!(matches!(
        run(&mut root, "GRANT SUPER ON shop.* TO 'u'@'%'"),
        Err(Error::WrongUsage(_))
    ));
    assert!(matches!(
        run(&mut root, "GRANT EXECUTE ON shop.items TO 'u'@'%'"),
        Err(Error::IllegalGrantForTable)
    ));
    assert!(matches!(
        run(&mut root, "GRANT SELECT ON shop.* TO 'nobody'@'%'"),
        Err(Error::NoSuchUser(_))
    ));
    assert!(matches!(
        run(&mut root, "GRANT SELECT (price) ON shop.items TO 'u'@'%'"),
        Err(Error::Unsupported(_))
    ));
    assert!(matches!(
        run(&mut root, "GRANT FLY ON *.* TO 'u'@'%'"),
        Err(Error::Syntax(_))
    ));
    // A user-level CREATE USER privilege is enough for account statements.
    ok(&mut root, "GRANT CREATE USER ON *.* TO 'v'@'%'");
    let mut v = e.session(3, "v", "h");
    ok(&mut v, "CREATE USER 'w'@'%' IDENTIFIED BY 'x'");
    ok(&mut v, "DROP USER 'w'@'%'");
}

#[test]
fn passwords_change_with_alter_user_and_set_password() {
    let (_s, e) = setup();
    let before = e.auth_info("u", "h").expect("u exists");
    let mut root = e.session(1, "root", "localhost");
    ok(
        &mut root,
        "ALTER USER 'u'@'%' IDENTIFIED WITH caching_sha2_password BY 'new'",
    );
    let after = e.auth_info("u", "h").expect("u exists");
    assert_eq!(after.plugin, canyon_sql::AuthPlugin::CachingSha2Password);
    assert!(canyon_sql::auth::check_sha2_verifier(
        &after.sha2_verifier,
        "new"
    ));
    assert_ne!(before, after);
    // Anyone may change their own password; nobody else's without CREATE USER.
    let mut u = e.session(2, "u", "h");
    ok(&mut u, "SET PASSWORD = 'mine'");
    let own = e.auth_info("u", "h").expect("u exists");
    assert!(canyon_sql::auth::check_sha2_verifier(
        &own.sha2_verifier,
        "mine"
    ));
    assert!(matches!(
        run(&mut u, "SET PASSWORD FOR 'root'@'%' = 'x'"),
        Err(Error::SpecificAccessDenied(_))
    ));
    assert!(matches!(
        run(&mut root, "ALTER USER 'ghost'@'%' IDENTIFIED BY 'x'"),
        Err(Error::CannotUser { .. })
    ));
    ok(
        &mut root,
        "ALTER USER IF EXISTS 'ghost'@'%' IDENTIFIED BY 'x'",
    );
    assert!(matches!(
        run(
            &mut root,
            "CREATE USER 'x'@'%' IDENTIFIED WITH sha256_password BY 'x'"
        ),
        Err(Error::PluginNotLoaded(_))
    ));
}

#[test]
fn grants_and_accounts_survive_a_restart() {
    let (storage, e) = setup();
    let mut root = e.session(1, "root", "localhost");
    ok(&mut root, "GRANT SELECT ON shop.items TO 'u'@'%'");
    ok(
        &mut root,
        "GRANT INSERT ON bank.* TO 'u'@'%' WITH GRANT OPTION",
    );
    ok(
        &mut root,
        "ALTER USER 'u'@'%' IDENTIFIED WITH caching_sha2_password BY 's'",
    );
    let expected = grants(&mut root, "SHOW GRANTS FOR 'u'@'%'");
    drop(root);
    drop(e);
    let e = open(&storage);
    let mut root = e.session(1, "root", "localhost");
    assert_eq!(grants(&mut root, "SHOW GRANTS FOR 'u'@'%'"), expected);
    let info = e.auth_info("u", "h").expect("u exists");
    assert!(canyon_sql::auth::check_sha2_verifier(
        &info.sha2_verifier,
        "s"
    ));
    let mut u = e.session(2, "u", "h");
    ok(&mut u, "SELECT * FROM shop.items");
    assert!(run(&mut u, "SELECT * FROM shop.orders").is_err());
}

/// Broken GRANT / REVOKE / SHOW GRANTS / account statements are syntax errors
/// (1064) or, for valid MySQL Canyon lacks, 1235 — never a panic or an OK —
/// and the session goes on.
#[test]
fn malformed_account_statements_are_errors() {
    let (_s, e) = setup();
    let mut root = e.session(1, "root", "localhost");
    for sql in [
        "GRANT",
        "GRANT SELECT",
        "GRANT SELECT ON",
        "GRANT SELECT ON *.* TO",
        "GRANT SELECT ON *. TO 'u'@'%'",
        "GRANT , ON *.* TO 'u'@'%'",
        "GRANT * ON *.* TO 'u'@'%'",
        "GRANT SELECT ON `unterminated TO 'u'@'%'",
        "GRANT SELECT ON *.* TO 'u'@'%' IDENTIFIED BY 'x'",
        "REVOKE SELECT FROM 'u'@'%'",
        "REVOKE SELECT ON *.* 'u'@'%'",
        "SHOW GRANTS FOR",
        "SHOW GRANTS FOR CURRENT_USER(",
        "SET PASSWORD 'x'",
        "ALTER USER 'u'@'%' IDENTIFIED",
        "ALTER TABLE DISABLE KEYS",
        "GRANT SELECT ON ☃.* TO 'u'@'%' WITH",
    ] {
        match run(&mut root, sql) {
            Err(Error::Syntax(_)) | Err(Error::Unsupported(_)) => {}
            other => panic!("{sql}: expected 1064 or 1235, got {other:?}"),
        }
    }
    ok(&mut root, "GRANT SELECT ON `☃`.* TO 'u'@'%'");
    assert_eq!(
        grants(&mut root, "SHOW GRANTS FOR u"),
        vec![
            "GRANT USAGE ON *.* TO `u`@`%`",
            "GRANT SELECT ON `☃`.* TO `u`@`%`",
        ]
    );
}
