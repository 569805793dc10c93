//! Unit tests of the session's text recognisers and SHOW CREATE TABLE.

use super::{dispatch::*, show::*, state::*};
use crate::catalog::engine::Engine;
use crate::parse::parse;
use crate::types::result::QueryResult;
use std::sync::Arc;

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
    assert_eq!(show_extra("SHOW KEYS FROM `d`.`t`"), index(Some("d"), "t"));
    assert_eq!(show_extra("SHOW INDEX IN `a.b`"), index(None, "a.b"));
    assert_eq!(show_extra("SHOW INDEX FROM t IN d"), index(Some("d"), "t"));
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
    let cfg = EngineConfig::for_unit_tests();
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

/// A session on a fresh in-memory engine with the given presentation.
fn presentation_session(presentation: crate::catalog::config::Presentation) -> Session {
    let cfg = EngineConfig {
        presentation,
        ..EngineConfig::for_unit_tests()
    };
    let storage = Arc::new(canyon_storage::MemoryStorage::new());
    let engine = Engine::open(storage, cfg).expect("engine opens");
    engine.bootstrap_root("").expect("root account");
    let mut s = engine.session(1, "root", "localhost");
    exec(&mut s, "CREATE DATABASE d");
    exec(&mut s, "USE d");
    s
}

fn exec(s: &mut Session, sql: &str) -> QueryResult {
    s.execute(sql, false)
        .pop()
        .expect("one result")
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn show_create(s: &mut Session, table: &str) -> String {
    let QueryResult::Rows { rows, .. } = exec(s, &format!("SHOW CREATE TABLE {table}")) else {
        panic!("SHOW CREATE TABLE returned no rows");
    };
    rows[0][1].to_display()
}

#[test]
fn show_create_table_normalises_defaults_and_keeps_index_attributes() {
    use crate::catalog::config::Presentation;
    let mut s = presentation_session(Presentation::Mysql);
    exec(
        &mut s,
        "CREATE TABLE t (a INT DEFAULT '1', b DECIMAL(10,8) DEFAULT 3.14, c DOUBLE DEFAULT 2.5, \
         d BINARY(3) DEFAULT 'x', f BIT(3) DEFAULT b'101', g CHAR(3) DEFAULT 5, \
         h DATETIME DEFAULT '2020-01-01', i INT AUTO_INCREMENT NULL UNIQUE, \
         j VARCHAR(20), k TEXT, z TINYINT ZEROFILL, u FIXED(5,2) UNSIGNED, \
         KEY kj (j(10) DESC, a) USING BTREE COMMENT 'prefix', UNIQUE KEY kk (k(5)), \
         KEY kf (j(20)) USING HASH)",
    );
    let ddl = show_create(&mut s, "t");
    assert_eq!(
        ddl,
        "CREATE TABLE `t` (\n  `a` int DEFAULT '1',\n  `b` decimal(10,8) DEFAULT '3.14000000',\n  \
         `c` double DEFAULT '2.5',\n  `d` binary(3) DEFAULT 'x\\0\\0',\n  \
         `f` bit(3) DEFAULT b'101',\n  `g` char(3) DEFAULT '5',\n  \
         `h` datetime DEFAULT '2020-01-01 00:00:00',\n  `i` int AUTO_INCREMENT,\n  \
         `j` varchar(20) DEFAULT NULL,\n  `k` text,\n  \
         `z` tinyint(3) unsigned zerofill DEFAULT NULL,\n  `u` decimal(5,2) unsigned DEFAULT NULL,\n  \
         UNIQUE KEY `i` (`i`),\n  KEY `kj` (`j`(10) DESC,`a`) USING BTREE COMMENT 'prefix',\n  \
         UNIQUE KEY `kk` (`k`(5)),\n  KEY `kf` (`j`) USING HASH\n\
         ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    );
    // The text re-creates the same table.
    exec(&mut s, "DROP TABLE t");
    exec(&mut s, &ddl);
    assert_eq!(show_create(&mut s, "t"), ddl);
    // MySQL's checks of defaults and key parts.
    for (sql, code) in [
        ("CREATE TABLE e (a INT DEFAULT 'abc')", 1067),
        ("CREATE TABLE e (a VARCHAR(2) DEFAULT 'abc')", 1067),
        ("CREATE TABLE e (a INT NOT NULL DEFAULT NULL)", 1067),
        ("CREATE TABLE e (a INT DEFAULT CURRENT_TIMESTAMP)", 1067),
        ("CREATE TABLE e (a TEXT, KEY (a))", 1170),
        ("CREATE TABLE e (a INT, KEY (a(2)))", 1089),
        ("CREATE TABLE e (a VARCHAR(5), KEY (a(6)))", 1089),
        ("ALTER TABLE t ALTER COLUMN a SET DEFAULT 'abc'", 1067),
        ("ALTER TABLE t ADD KEY (k)", 1170),
    ] {
        match s.execute(sql, false).pop().expect("one result") {
            Err(canyon_common::Error::Sql { code: c, .. }) => assert_eq!(c, code, "{sql}"),
            other => panic!("{sql}: {other:?}"),
        }
    }
    // The spellings sqlparser does not parse: DROP KEY, RENAME without TO.
    exec(&mut s, "ALTER TABLE t DROP KEY kf");
    exec(&mut s, "ALTER TABLE t RENAME t2");
    assert!(!show_create(&mut s, "t2").contains("`kf`"));
}

#[test]
fn mariadb_presentation_prints_mariadb_s_text() {
    use crate::catalog::config::Presentation;
    let mut s = presentation_session(Presentation::Mariadb);
    exec(
        &mut s,
        "CREATE TABLE p (a INT DEFAULT '1', b DECIMAL(4,1) DEFAULT 2, c VARCHAR(3) DEFAULT 'x') \
         PARTITION BY RANGE (a) (PARTITION p0 VALUES LESS THAN (10), \
         PARTITION p1 VALUES LESS THAN MAXVALUE)",
    );
    assert_eq!(
        show_create(&mut s, "p"),
        "CREATE TABLE `p` (\n  `a` int(11) DEFAULT 1,\n  `b` decimal(4,1) DEFAULT 2.0,\n  \
         `c` varchar(3) DEFAULT 'x'\n\
         ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci\n \
         PARTITION BY RANGE (`a`)\n\
         (PARTITION `p0` VALUES LESS THAN (10) ENGINE = InnoDB,\n \
         PARTITION `p1` VALUES LESS THAN MAXVALUE ENGINE = InnoDB)"
    );
}

#[test]
fn show_index_has_mysql_8_s_columns_or_mariadb_s() {
    use crate::catalog::config::Presentation;
    for (p, tail) in [
        (Presentation::Mysql, vec!["Visible", "Expression"]),
        (Presentation::Mariadb, vec!["Ignored"]),
    ] {
        let mut s = presentation_session(p);
        exec(
            &mut s,
            "CREATE TABLE t (a INT PRIMARY KEY, b INT, KEY kb (b))",
        );
        let QueryResult::Rows { columns, rows, .. } = exec(&mut s, "SHOW INDEX FROM d.t") else {
            panic!("SHOW INDEX returned no rows");
        };
        let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names.len(), 13 + tail.len(), "{p:?}: {names:?}");
        assert_eq!(names[12], "Index_comment");
        assert_eq!(&names[13..], &tail[..], "{p:?}");
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|r| r.len() == names.len()), "{p:?}");
    }
}

#[test]
fn mariadb_presentation_words_errors_as_mariadb_does() {
    use crate::catalog::config::Presentation;
    let message = |p: Presentation, sql: &str| {
        let mut s = presentation_session(p);
        exec(
            &mut s,
            "CREATE TABLE t (a INT) PARTITION BY RANGE (a) (PARTITION p0 VALUES LESS THAN (10))",
        );
        s.execute(sql, false)
            .pop()
            .expect("one result")
            .expect_err(sql)
    };
    // MySQL 8's text by default, MariaDB's with its presentation; the
    // number stays 1091 / 1507 either way.
    let e = message(Presentation::Mysql, "DROP INDEX i1 ON t");
    assert!(
        matches!(e, canyon_common::Error::CantDropKey { kind: "INDEX", .. }),
        "{e:?}"
    );
    let e = message(Presentation::Mariadb, "ALTER TABLE t DROP COLUMN nope");
    match e {
        canyon_common::Error::Presented { code, message, .. } => {
            assert_eq!(code, 1091);
            assert_eq!(message, "Can't DROP COLUMN `nope`; check that it exists");
        }
        e => panic!("{e:?}"),
    }
    let e = message(Presentation::Mariadb, "ALTER TABLE t DROP PARTITION s2");
    assert!(
        matches!(&e, canyon_common::Error::Partition { code: 1507, message }
            if message == "Wrong partition name or partition list"),
        "{e:?}"
    );
    let e = message(Presentation::Mysql, "ALTER TABLE t DROP PARTITION s2");
    assert!(
        matches!(&e, canyon_common::Error::Partition { code: 1507, message }
            if message == "Error in list of partitions to DROP"),
        "{e:?}"
    );
    // 1093 names the statement in MariaDB's words; 1439 drops `column `.
    let sql = "DELETE FROM t WHERE a = (SELECT MAX(a) FROM t)";
    let e = message(Presentation::Mysql, sql);
    assert!(
        matches!(&e, canyon_common::Error::UpdateTableUsed(t) if t == "t"),
        "{e:?}"
    );
    match message(Presentation::Mariadb, sql) {
        canyon_common::Error::Presented { code, message, .. } => {
            assert_eq!(code, 1093);
            assert_eq!(
                message,
                "Table 't' is specified twice, both as a target for 'DELETE' and as a \
                 separate source for data"
            );
        }
        e => panic!("{e:?}"),
    }
    for (p, want) in [
        (Presentation::Mysql, "for column 'c1' (max = 64)"),
        (Presentation::Mariadb, "for 'c1' (max = 64)"),
    ] {
        match message(p, "CREATE TABLE b (c1 BIT(65))") {
            canyon_common::Error::Sql { code, message, .. } => {
                assert_eq!(code, 1439);
                assert_eq!(message, format!("Display width out of range {want}"));
            }
            e => panic!("{e:?}"),
        }
    }
}

#[test]
fn mariadb_presentation_names_an_incorrect_value_s_column_by_table() {
    use crate::catalog::config::Presentation;
    // MariaDB 10.11: "Incorrect integer value: 'x' for column `d`.`t`.`a`
    // at row 1" (insert_number); MySQL 8: "... for column 'a' at row 1".
    let warning = |p: Presentation| {
        let mut s = presentation_session(p);
        exec(&mut s, "CREATE TABLE t (a INT)");
        exec(&mut s, "SET sql_mode = ''");
        exec(&mut s, "INSERT INTO t VALUES ('x')");
        let QueryResult::Rows { rows, .. } = exec(&mut s, "SHOW WARNINGS") else {
            panic!("SHOW WARNINGS returned no rows");
        };
        rows[0][2].to_display()
    };
    assert_eq!(
        warning(Presentation::Mariadb),
        "Incorrect integer value: 'x' for column `d`.`t`.`a` at row 1"
    );
    assert_eq!(
        warning(Presentation::Mysql),
        "Incorrect integer value: 'x' for column 'a' at row 1"
    );
}

/// The rows of `sql` as a client shows them (`crate::types::text`), NULL
/// as `NULL`, one row a line, tab-separated.
fn shown(s: &mut Session, sql: &str) -> String {
    let QueryResult::Rows { columns, rows, .. } = exec(s, sql) else {
        panic!("{sql}: no rows");
    };
    rows.iter()
        .map(|row| {
            row.iter()
                .zip(columns.iter())
                .map(|(v, c)| {
                    crate::types::text::column_text(v, c).map_or("NULL".to_string(), |b| {
                        String::from_utf8_lossy(&b).into_owned()
                    })
                })
                .collect::<Vec<_>>()
                .join("\t")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// YEAR(2), checked against MariaDB 10.11 (`presentation = "mariadb"`) and
/// MySQL 8 (1818 ER_INVALID_YEAR_COLUMN_LENGTH otherwise).
#[test]
fn year2_columns_are_mariadb_s() {
    use crate::catalog::config::Presentation;
    let mut my = presentation_session(Presentation::Mysql);
    for sql in [
        "CREATE TABLE y (a YEAR(2))",
        "CREATE TABLE y (a YEAR(3))",
        "CREATE TABLE y (a YEAR(4), b YEAR)",
        "ALTER TABLE y ADD c YEAR(2)",
    ] {
        match my.execute(sql, false).pop().expect("one result") {
            Err(canyon_common::Error::Sql { code, message, .. }) => {
                assert_eq!(code, 1818, "{sql}");
                assert_eq!(message, "Supports only YEAR or YEAR(4) column.");
            }
            Ok(_) if sql.contains("YEAR(4)") => {}
            other => panic!("{sql}: {other:?}"),
        }
    }

    let mut s = presentation_session(Presentation::Mariadb);
    exec(
        &mut s,
        "CREATE TABLE y (a YEAR(2), b YEAR(3), c YEAR(4), k INT PRIMARY KEY)",
    );
    // One Note per column of another length than 4; YEAR(3) becomes YEAR(4).
    let notes: Vec<_> = s
        .state
        .warnings
        .iter()
        .map(|w| (w.0, w.1, w.2.clone()))
        .collect();
    assert_eq!(
        notes,
        [2, 3].map(|n| (
            "Note",
            1287,
            format!(
                "'YEAR({n})' is deprecated and will be removed in a future release. \
                 Please use YEAR(4) instead"
            )
        ))
    );
    assert_eq!(
        show_create(&mut s, "y"),
        "CREATE TABLE `y` (\n  `a` year(2) DEFAULT NULL,\n  `b` year(4) DEFAULT NULL,\n  \
         `c` year(4) DEFAULT NULL,\n  `k` int(11) NOT NULL,\n  PRIMARY KEY (`k`)\n\
         ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    );
    // DESCRIBE / SHOW COLUMNS name the type as SHOW CREATE TABLE does.
    assert_eq!(
        shown(&mut s, "SHOW COLUMNS FROM y"),
        "a\tyear(2)\tYES\t\tNULL\t\nb\tyear(4)\tYES\t\tNULL\t\n\
         c\tyear(4)\tYES\t\tNULL\t\nk\tint(11)\tNO\tPRI\tNULL\t"
    );
    // Stored as YEAR(4) stores it, shown as two digits.
    exec(
        &mut s,
        "INSERT INTO y (k, a, c) VALUES (1, 1901, 1901), (2, 1970, 1970), (3, '05', '05'), \
         (4, 69, 69), (5, 2155, 2155), (6, '0', '0')",
    );
    assert_eq!(
        shown(&mut s, "SELECT a, c, a + 0, a + c FROM y ORDER BY k"),
        "01\t1901\t1\t1902\n70\t1970\t70\t2040\n05\t2005\t5\t2010\n\
         69\t2069\t69\t2138\n55\t2155\t55\t2210\n00\t2000\t0\t2000"
    );
    // Compared with a constant: the constant read as a year, modulo 100.
    assert_eq!(
        shown(
            &mut s,
            "SELECT k, a < '64', a < 1964, a = 2069, a = '05', a IN (1, 2070) FROM y ORDER BY k"
        ),
        "1\t1\t1\t0\t0\t1\n2\t0\t0\t0\t0\t1\n3\t1\t1\t0\t1\t0\n\
         4\t0\t0\t1\t0\t0\n5\t1\t1\t0\t0\t0\n6\t1\t1\t0\t0\t0"
    );
    // A YEAR(4) column compared with a constant: the constant read as a
    // year (number 0 the year 0000, the string '0' 2000).
    assert_eq!(
        shown(
            &mut s,
            "SELECT k, c > '10', c = 69, c IN (5, 70), c = 0, c = '0' FROM y ORDER BY k"
        ),
        "1\t0\t0\t0\t0\t0\n2\t0\t0\t1\t0\t0\n3\t0\t0\t1\t0\t0\n\
         4\t1\t1\t0\t0\t0\n5\t1\t0\t0\t0\t0\n6\t0\t0\t0\t0\t1"
    );
    assert_eq!(
        shown(
            &mut s,
            "SELECT k, c BETWEEN '10' AND '2100', a BETWEEN '01' AND 1969 FROM y ORDER BY k"
        ),
        "1\t0\t1\n2\t0\t0\n3\t0\t1\n4\t1\t1\n5\t0\t1\n6\t0\t0"
    );
    // MIN / MAX of YEAR(2): the two digits as a year of 1970-2069 (no key
    // on `a`), shown as numbers.
    assert_eq!(
        shown(&mut s, "SELECT MIN(a), MAX(a), MIN(c), MAX(c) FROM y"),
        "70\t69\t1901\t2155"
    );
    // Sorted by the year; with a YEAR(4) column compared as years.
    assert_eq!(
        shown(&mut s, "SELECT a FROM y ORDER BY a DESC"),
        "55\n69\n05\n00\n70\n01"
    );
    assert_eq!(
        shown(&mut s, "SELECT a FROM y WHERE a = c ORDER BY k"),
        "01\n70\n05\n69\n55\n00"
    );
    // Arithmetic in an UPDATE reads the two digits, the store the year.
    exec(&mut s, "UPDATE y SET a = a + 5 WHERE a = '05'");
    assert_eq!(shown(&mut s, "SELECT a, a = c FROM y WHERE k = 3"), "10\t0");
    exec(&mut s, "ALTER TABLE y ADD d YEAR(2)");
    assert!(show_create(&mut s, "y").contains("`d` year(2) DEFAULT NULL"));
}

/// A YEAR(2) column that leads a key, compared with a constant in WHERE,
/// as MariaDB 10.11 answers it (the key's range of stored years, then the
/// two-digit comparison); the number 0 stores 2000 there; a year out of
/// range stores 0000 with warning 1264.
#[test]
fn keyed_year2_compares_stored_years_in_where() {
    use crate::catalog::config::Presentation;
    let mut s = presentation_session(Presentation::Mariadb);
    exec(
        &mut s,
        "CREATE TABLE yk (a YEAR(2) PRIMARY KEY, b YEAR(2), n INT)",
    );
    exec(
        &mut s,
        "INSERT INTO yk VALUES (1901,1901,1), (2001,2001,2), (2054,2054,3), (2154,2154,4), \
         (1970,1970,5), (0,0,6)",
    );
    assert_eq!(
        shown(&mut s, "SELECT a, b FROM yk WHERE a < '55' ORDER BY n"),
        "01\t01\n01\t01\n54\t54\n00\t00"
    );
    assert_eq!(shown(&mut s, "SELECT a FROM yk WHERE a = '01'"), "01");
    assert_eq!(shown(&mut s, "SELECT a FROM yk WHERE a <=> '1901'"), "01");
    assert_eq!(
        shown(
            &mut s,
            "SELECT a FROM yk WHERE a BETWEEN 1 AND 60 ORDER BY a"
        ),
        "01\n54"
    );
    assert_eq!(
        shown(&mut s, "SELECT a FROM yk WHERE a IN (54, 70) ORDER BY n"),
        "54\n70"
    );
    // MIN / MAX of a keyed YEAR(2): by the stored years.
    assert_eq!(shown(&mut s, "SELECT MIN(a), MAX(a) FROM yk"), "1\t54");
    // `b` leads no key: the two digits only.
    assert_eq!(
        shown(&mut s, "SELECT b FROM yk WHERE b < '55' ORDER BY n"),
        "01\n01\n54\n54\n00"
    );
    // The number 0 is 2000 in a YEAR(2) column (equal to its YEAR(2) twin).
    assert_eq!(
        shown(&mut s, "SELECT a + 0, a = b FROM yk WHERE n = 6"),
        "0\t1"
    );
    exec(&mut s, "UPDATE IGNORE yk SET b = 3000 WHERE n = 1");
    assert_eq!(
        s.state.warnings.iter().map(|w| w.1).collect::<Vec<_>>(),
        [1264]
    );
    assert_eq!(
        shown(&mut s, "SELECT b + 0, b = 0 FROM yk WHERE n = 1"),
        "0\t1"
    );
    // MariaDB's UPDATE IGNORE skips a duplicate without a warning.
    exec(&mut s, "UPDATE IGNORE yk SET a = 2054 WHERE n = 2");
    assert!(s.state.warnings.is_empty(), "{:?}", s.state.warnings);
    assert_eq!(shown(&mut s, "SELECT a FROM yk WHERE n = 2"), "01");
    // A duplicate key names the YEAR(2) value as shown (MariaDB: '01').
    match s
        .execute("INSERT INTO yk VALUES (2001, 1, 7)", false)
        .pop()
        .expect("one result")
    {
        Err(canyon_common::Error::DuplicateEntry { value, .. }) => assert_eq!(value, "01"),
        other => panic!("{other:?}"),
    }
    // Out of range and NULL for NOT NULL under IGNORE: the year 0000 (YEAR(4)).
    exec(&mut s, "CREATE TABLE y4 (a YEAR NOT NULL, n INT)");
    exec(
        &mut s,
        "INSERT IGNORE INTO y4 VALUES (1900, 1), (NULL, 2), (-1, 3)",
    );
    assert_eq!(
        shown(&mut s, "SELECT a FROM y4 ORDER BY n"),
        "0000\n0000\n0000"
    );
    // A DATE or DATETIME stored in a YEAR: its year, with MariaDB's 1265
    // (MySQL 8 gives none).
    exec(
        &mut s,
        "INSERT IGNORE INTO y4 VALUES (TIMESTAMP '2009-01-29 13:41:27', 4), (DATE '2010-02-03', 5)",
    );
    assert_eq!(
        s.state
            .warnings
            .iter()
            .map(|w| (w.1, w.2.clone()))
            .collect::<Vec<_>>(),
        [
            (1265, "Data truncated for column 'a' at row 1".to_string()),
            (1265, "Data truncated for column 'a' at row 2".to_string())
        ]
    );
    assert_eq!(
        shown(&mut s, "SELECT a FROM y4 WHERE n > 3 ORDER BY n"),
        "2009\n2010"
    );
    let mut my = presentation_session(Presentation::Mysql);
    exec(&mut my, "CREATE TABLE y4 (a YEAR)");
    exec(
        &mut my,
        "INSERT INTO y4 VALUES (TIMESTAMP '2009-01-29 13:41:27')",
    );
    assert!(my.state.warnings.is_empty(), "{:?}", my.state.warnings);
    exec(
        &mut s,
        "CREATE TABLE y5 (a YEAR, b YEAR, UNIQUE KEY idx (a, b))",
    );
    exec(&mut s, "INSERT INTO y5 VALUES (0, 0)");
    match s
        .execute("INSERT INTO y5 VALUES (0, 0)", false)
        .pop()
        .expect("one result")
    {
        Err(canyon_common::Error::DuplicateEntry { value, .. }) => assert_eq!(value, "0000-0000"),
        other => panic!("{other:?}"),
    }
}

/// A keyed YEAR(2) column compared with a constant in WHERE is read through
/// the key's range of stored years, as MariaDB reads it: an UPDATE's warning
/// names the row by its place among the rows that range read (`at row 1`),
/// not among the whole table's. (MariaDB 10.11: `update_year`.)
#[test]
fn keyed_year2_comparison_reads_the_key_range() {
    use crate::catalog::config::Presentation;
    let mut s = presentation_session(Presentation::Mariadb);
    exec(
        &mut s,
        "CREATE TABLE yr (a YEAR(2), b YEAR(2), UNIQUE INDEX idx (a, b))",
    );
    exec(
        &mut s,
        "INSERT INTO yr VALUES (1901, 1), (2001, 2), (1979, 3), (2079, 4), (2010, 5)",
    );
    let warned = |s: &mut Session, sql: &str| {
        exec(s, sql);
        s.state
            .warnings
            .iter()
            .map(|w| w.2.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        warned(&mut s, "UPDATE IGNORE yr SET b = 100 WHERE a = 79"),
        ["Out of range value for column 'b' at row 1"]
    );
    assert_eq!(
        warned(
            &mut s,
            "UPDATE IGNORE yr SET b = -1 WHERE a BETWEEN 2001 AND 2010"
        ),
        [
            "Out of range value for column 'b' at row 1",
            "Out of range value for column 'b' at row 2"
        ]
    );
    // The range and the two digits both decide: `a < '10'` is 2001 and
    // 1901 (stored years below 2010 whose two digits are below 10).
    assert_eq!(
        shown(&mut s, "SELECT a FROM yr WHERE a < '10' ORDER BY a"),
        "01\n01"
    );
    assert_eq!(
        shown(
            &mut s,
            "SELECT a FROM yr WHERE a NOT BETWEEN 1 AND 60 ORDER BY a"
        ),
        "79\n79"
    );
}
