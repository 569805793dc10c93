//! Unit tests of the session's text recognisers and SHOW CREATE TABLE.

use super::{dispatch::*, show::*, state::*};
use crate::catalog::engine::Engine;
use crate::parse::parse;
use crate::types::result::QueryResult;
use std::sync::Arc;
use std::time::Duration;

use crate::catalog::config::EngineConfig;

#[test]
fn transaction_control_texts_parse_as_the_parser_would() {
    for sql in [
        "commit",
        "  Commit ;",
        "BEGIN",
        "rollback;",
        "start transaction\n",
    ] {
        let cached = transaction_control(sql).expect("recognised");
        let parsed = parse(sql).expect("parses");
        assert_eq!(format!("{cached:?}"), format!("{parsed:?}"), "{sql}");
    }
    for sql in [
        "COMMIT WORK",
        "ROLLBACK TO SAVEPOINT a",
        "START TRANSACTION READ ONLY",
        "/* c */ COMMIT",
        "COMMIT;;",
        "BEGIN WORK",
    ] {
        assert!(transaction_control(sql).is_none(), "{sql}");
    }
}

#[test]
fn show_extra_forms() {
    let index = |db: Option<&str>, t: &str| {
        Some(ShowExtra::Index {
            db: db.map(str::to_string),
            table: t.to_string(),
        })
    };
    assert_eq!(show_extra("show engines"), Some(ShowExtra::Engines));
    assert_eq!(
        show_extra("SHOW STORAGE ENGINES;"),
        Some(ShowExtra::Engines)
    );
    assert_eq!(show_extra("SHOW INDEX FROM t"), index(None, "t"));
    assert_eq!(show_extra("SHOW KEYS IN `t` FROM d"), index(Some("d"), "t"));
    assert_eq!(show_extra("SHOW INDEXES FROM d.t"), index(Some("d"), "t"));
    assert_eq!(show_extra("SHOW INDEX FROM t WHERE x"), None);
    assert_eq!(
        show_extra("SHOW TABLE STATUS FROM d LIKE 'a b%'"),
        Some(ShowExtra::TableStatus {
            db: Some("d".into()),
            like: Some("a b%".into())
        })
    );
    assert_eq!(
        show_extra("show grants for 'u'@'h'"),
        None,
        "parse.rs has GRANTS"
    );
    assert_eq!(
        show_extra("SHOW CREATE SCHEMA IF NOT EXISTS `d`"),
        Some(ShowExtra::CreateDatabase {
            db: "d".into(),
            if_not_exists: true
        })
    );
    assert_eq!(
        show_extra("SHOW EVENTS WHERE Db = 'd'"),
        Some(ShowExtra::Empty(SHOW_EVENTS))
    );
    assert_eq!(show_extra("SHOW TABLES"), None);
    assert_eq!(show_extra("SELECT 1"), None);
}

#[test]
fn show_create_table_recreates_the_table() {
    let cfg = EngineConfig {
        durability: canyon_txn::Durability::SyncEveryCommit,
        lock_wait_timeout: Duration::from_secs(2),
        blocking_hook: None,
        version: "8.0.36-canyon-test".into(),
        max_allowed_packet: 64 << 20,
        max_connections: 10,
        port: 3306,
        row_cache_bytes: 1 << 20,
        history_memory_bytes: 1 << 20,
        statement_memory_limit: crate::catalog::config::DEFAULT_STATEMENT_MEMORY_LIMIT,
        statement_memory_budget: crate::catalog::config::DEFAULT_STATEMENT_MEMORY_BUDGET,
        server_collation: crate::types::collation::Collation::DEFAULT,
        display_widths: false,
        local_infile: false,
        secure_file_priv: None,
    };
    let storage = Arc::new(canyon_storage::MemoryStorage::new());
    let engine = Engine::open(storage, cfg).expect("engine opens");
    engine.bootstrap_root("").expect("root account");
    let mut s = engine.session(1, "root", "localhost");
    let run = |s: &mut Session, sql: &str| {
        s.execute(sql, false)
            .pop()
            .expect("one result")
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    };
    run(&mut s, "CREATE DATABASE d");
    run(&mut s, "USE d");
    run(
        &mut s,
        "CREATE TABLE t (id BIGINT NOT NULL AUTO_INCREMENT, s VARCHAR(10) NOT NULL DEFAULT 'it''s', \
         n INT, b VARCHAR(3) COLLATE utf8mb4_bin, l CHAR(2) CHARACTER SET latin1, \
         PRIMARY KEY (id), UNIQUE KEY us (s), KEY kn (n, s))",
    );
    let QueryResult::Rows { rows, .. } = run(&mut s, "SHOW CREATE TABLE t") else {
        panic!("SHOW CREATE TABLE returned no rows");
    };
    let ddl = rows[0][1].to_display();
    assert_eq!(
        ddl,
        "CREATE TABLE `t` (\n  `id` bigint NOT NULL AUTO_INCREMENT,\n  \
         `s` varchar(10) NOT NULL DEFAULT 'it''s',\n  `n` int DEFAULT NULL,\n  \
         `b` varchar(3) COLLATE utf8mb4_bin DEFAULT NULL,\n  \
         `l` char(2) CHARACTER SET latin1 COLLATE latin1_swedish_ci DEFAULT NULL,\n  \
         PRIMARY KEY (`id`),\n  UNIQUE KEY `us` (`s`),\n  KEY `kn` (`n`,`s`)\n\
         ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    );
    run(&mut s, "DROP TABLE t");
    run(&mut s, &ddl);
    let QueryResult::Rows { rows, .. } = run(&mut s, "SHOW CREATE TABLE t") else {
        panic!("SHOW CREATE TABLE returned no rows");
    };
    assert_eq!(rows[0][1].to_display(), ddl);
}
