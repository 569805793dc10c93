//! Partitioned tables through the engine API: the PARTITION BY clause and
//! its checks (MySQL's error numbers), row placement (1526, and a warning
//! under INSERT IGNORE), TRUNCATE / DROP / ADD / COALESCE / REORGANIZE /
//! REMOVE PARTITIONING and PARTITION BY on a table with rows, SHOW CREATE
//! TABLE, information_schema.PARTITIONS and EXPLAIN's `partitions`.

mod common;

use canyon_common::Error;
use canyon_sql::Session;
use std::time::Duration;

use common::{ok, rows, run};

/// The values of the first column, one string.
fn column(s: &mut Session, sql: &str) -> String {
    rows(s, sql)
        .into_iter()
        .map(|r| r[0].clone())
        .collect::<Vec<_>>()
        .join(",")
}

/// The MySQL error number of a failing statement.
fn errno(s: &mut Session, sql: &str) -> u16 {
    match run(s, sql) {
        Ok(r) => panic!("{sql}: expected an error, got {r:?}"),
        Err(e) => canyon_protocol_errno(&e),
    }
}

/// The numbers this test expects, from the error's variant (the protocol
/// crate maps the rest; the partition errors carry theirs).
fn canyon_protocol_errno(e: &Error) -> u16 {
    match e {
        Error::Partition { code, .. } => *code,
        Error::UnknownColumn { .. } => 1054,
        Error::Syntax(_) => 1064,
        other => panic!("unexpected error {other:?}"),
    }
}

fn session() -> Session {
    let e = common::engine(Duration::from_secs(5));
    let mut s = e.session(1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE p");
    ok(&mut s, "USE p");
    s
}

fn show_create(s: &mut Session, t: &str) -> String {
    rows(s, &format!("SHOW CREATE TABLE {t}"))[0][1].clone()
}

#[test]
fn definitions_are_checked_with_mysqls_errors() {
    let mut s = session();
    let cases: &[(&str, u16)] = &[
        ("CREATE TABLE e (a INT) PARTITION BY HASH(a / 2) PARTITIONS 2", 1564),
        ("CREATE TABLE e (a INT) PARTITION BY HASH(RAND(a)) PARTITIONS 2", 1564),
        ("CREATE TABLE e (a INT) PARTITION BY HASH(1) PARTITIONS 2", 1486),
        ("CREATE TABLE e (a INT) PARTITION BY HASH(zz)", 1054),
        ("CREATE TABLE e (a INT) PARTITION BY KEY(zz)", 1488),
        ("CREATE TABLE e (a VARCHAR(5)) PARTITION BY HASH(a)", 1659),
        ("CREATE TABLE e (a INT PRIMARY KEY, b INT) PARTITION BY HASH(b)", 1503),
        ("CREATE TABLE e (a INT, b INT, UNIQUE KEY (b)) PARTITION BY HASH(a)", 1503),
        ("CREATE TABLE e (a INT) PARTITION BY HASH(a) PARTITIONS 0", 1504),
        ("CREATE TABLE e (a INT) PARTITION BY HASH(a) PARTITIONS 2 (PARTITION x, PARTITION y, PARTITION z)", 1064),
        ("CREATE TABLE e (a INT) PARTITION BY RANGE(a)", 1492),
        ("CREATE TABLE e (a INT) PARTITION BY RANGE(a) (PARTITION p0)", 1479),
        ("CREATE TABLE e (a INT) PARTITION BY LIST(a) (PARTITION p0 VALUES LESS THAN (1))", 1480),
        ("CREATE TABLE e (a INT) PARTITION BY RANGE(a) (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN (10))", 1493),
        ("CREATE TABLE e (a INT) PARTITION BY RANGE(a) (PARTITION p0 VALUES LESS THAN MAXVALUE, PARTITION p1 VALUES LESS THAN (5))", 1481),
        ("CREATE TABLE e (a INT) PARTITION BY RANGE(a) (PARTITION p0 VALUES LESS THAN ('x'))", 1697),
        ("CREATE TABLE e (a INT) PARTITION BY RANGE(a) (PARTITION p0 VALUES LESS THAN (1), PARTITION P0 VALUES LESS THAN (2))", 1517),
        ("CREATE TABLE e (a INT) PARTITION BY LIST(a) (PARTITION p0 VALUES IN (1, 2), PARTITION p1 VALUES IN (2))", 1495),
        ("CREATE TABLE e (a INT, b INT) PARTITION BY RANGE COLUMNS(a, b) (PARTITION p0 VALUES LESS THAN (1))", 1064),
        ("CREATE TABLE e (a INT) PARTITION BY HASH(a) SUBPARTITION BY HASH(a)", 1500),
        ("CREATE TABLE e (a INT) PARTITION BY FOO(a)", 1064),
    ];
    for (sql, want) in cases {
        assert_eq!(errno(&mut s, sql), *want, "{sql}");
    }
    assert!(
        rows(&mut s, "SHOW TABLES").is_empty(),
        "no table was created"
    );
}

#[test]
fn range_rows_are_placed_and_refused() {
    let mut s = session();
    ok(
        &mut s,
        "CREATE TABLE r (id INT NOT NULL, d DATE NOT NULL, PRIMARY KEY (id, d)) \
         PARTITION BY RANGE (YEAR(d)) (PARTITION p0 VALUES LESS THAN (1990), \
         PARTITION p1 VALUES LESS THAN (2000))",
    );
    ok(
        &mut s,
        "INSERT INTO r VALUES (1, '1985-01-01'), (2, '1995-06-01')",
    );
    assert_eq!(
        errno(&mut s, "INSERT INTO r VALUES (3, '2005-01-01')"),
        1526
    );
    match run(&mut s, "INSERT INTO r VALUES (3, '2005-01-01')") {
        Err(Error::Partition { message, .. }) => {
            assert_eq!(message, "Table has no partition for value 2005")
        }
        other => panic!("{other:?}"),
    }
    // IGNORE: the row is skipped with the error as a warning.
    ok(
        &mut s,
        "INSERT IGNORE INTO r VALUES (4, '2006-01-01'), (5, '1999-01-01')",
    );
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        vec![vec![
            "Warning".to_string(),
            "1526".into(),
            "Table has no partition for value 2006".into()
        ]]
    );
    assert_eq!(column(&mut s, "SELECT id FROM r ORDER BY id"), "1,2,5");
    // An UPDATE that moves a row out of every partition fails whole.
    assert_eq!(
        errno(&mut s, "UPDATE r SET d = '2010-01-01' WHERE id = 1"),
        1526
    );
    assert_eq!(column(&mut s, "SELECT YEAR(d) FROM r WHERE id = 1"), "1985");
    ok(&mut s, "UPDATE r SET d = '1991-01-01' WHERE id = 1");
}

#[test]
fn list_and_columns_partitioning_place_rows() {
    let mut s = session();
    ok(
        &mut s,
        "CREATE TABLE l (a INT, b INT) PARTITION BY LIST (a) \
         (PARTITION odd VALUES IN (1, 3, 5), PARTITION even VALUES IN (2, 4, NULL))",
    );
    ok(&mut s, "INSERT INTO l VALUES (1, 0), (4, 0), (NULL, 0)");
    assert_eq!(errno(&mut s, "INSERT INTO l VALUES (7, 0)"), 1526);
    ok(
        &mut s,
        "CREATE TABLE rc (a INT, b VARCHAR(10)) PARTITION BY RANGE COLUMNS (a, b) \
         (PARTITION p0 VALUES LESS THAN (10, 'm'), PARTITION p1 VALUES LESS THAN (20, MAXVALUE))",
    );
    ok(
        &mut s,
        "INSERT INTO rc VALUES (10, 'a'), (19, 'zzz'), (20, 'a')",
    );
    match run(&mut s, "INSERT INTO rc VALUES (21, 'a')") {
        Err(Error::Partition {
            code: 1526,
            message,
        }) => {
            assert_eq!(message, "Table has no partition for value from column_list")
        }
        other => panic!("{other:?}"),
    }
    ok(
        &mut s,
        "CREATE TABLE lc (c VARCHAR(5)) PARTITION BY LIST COLUMNS (c) \
         (PARTITION ab VALUES IN ('a', 'b'), PARTITION cd VALUES IN ('c', 'd'))",
    );
    ok(&mut s, "INSERT INTO lc VALUES ('a'), ('D')");
    assert_eq!(errno(&mut s, "INSERT INTO lc VALUES ('e')"), 1526);
}

#[test]
fn truncate_and_drop_partition_delete_exactly_their_rows() {
    let mut s = session();
    // As the server runs: a commit's durability wait may be left pending.
    s.set_deferred_durability(true);
    ok(
        &mut s,
        "CREATE TABLE t (a INT PRIMARY KEY, b INT) PARTITION BY RANGE (a) \
         (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN (20), \
         PARTITION p2 VALUES LESS THAN (30))",
    );
    ok(
        &mut s,
        "INSERT INTO t VALUES (1,1), (5,5), (11,11), (15,15), (21,21), (25,25)",
    );
    ok(&mut s, "ALTER TABLE t TRUNCATE PARTITION p1");
    assert_eq!(column(&mut s, "SELECT a FROM t ORDER BY a"), "1,5,21,25");
    ok(&mut s, "ALTER TABLE t DROP PARTITION p0");
    assert_eq!(column(&mut s, "SELECT a FROM t ORDER BY a"), "21,25");
    // The dropped range now belongs to p1 (the first partition).
    ok(&mut s, "INSERT INTO t VALUES (2, 2)");
    assert_eq!(
        column(
            &mut s,
            "SELECT PARTITION_NAME FROM information_schema.PARTITIONS \
             WHERE TABLE_NAME = 't' ORDER BY PARTITION_ORDINAL_POSITION"
        ),
        "p1,p2"
    );
    assert_eq!(errno(&mut s, "ALTER TABLE t DROP PARTITION nope"), 1507);
    assert_eq!(errno(&mut s, "ALTER TABLE t DROP PARTITION p1, p2"), 1508);
    ok(&mut s, "ALTER TABLE t TRUNCATE PARTITION ALL");
    assert!(rows(&mut s, "SELECT * FROM t").is_empty());
    // Partition management needs a partitioned table.
    ok(&mut s, "CREATE TABLE plain (a INT)");
    assert_eq!(errno(&mut s, "ALTER TABLE plain DROP PARTITION p0"), 1505);
}

#[test]
fn alter_changes_partitioning_and_checks_rows() {
    let mut s = session();
    ok(
        &mut s,
        "CREATE TABLE t (a INT, b INT) PARTITION BY RANGE (a) \
         (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN (20))",
    );
    ok(&mut s, "INSERT INTO t VALUES (1, 1), (15, 15)");
    assert_eq!(
        errno(
            &mut s,
            "ALTER TABLE t ADD PARTITION (PARTITION p2 VALUES LESS THAN (15))"
        ),
        1493
    );
    ok(
        &mut s,
        "ALTER TABLE t ADD PARTITION (PARTITION p2 VALUES LESS THAN MAXVALUE)",
    );
    ok(&mut s, "INSERT INTO t VALUES (100, 100)");
    // Splitting p0 must keep its upper bound.
    assert_eq!(
        errno(
            &mut s,
            "ALTER TABLE t REORGANIZE PARTITION p0 INTO (PARTITION s0 VALUES LESS THAN (3), PARTITION s1 VALUES LESS THAN (7))"
        ),
        1520
    );
    ok(
        &mut s,
        "ALTER TABLE t REORGANIZE PARTITION p0 INTO (PARTITION s0 VALUES LESS THAN (3), PARTITION s1 VALUES LESS THAN (10))",
    );
    assert_eq!(
        column(
            &mut s,
            "SELECT PARTITION_NAME FROM information_schema.PARTITIONS WHERE TABLE_NAME = 't'"
        ),
        "s0,s1,p1,p2"
    );
    // A LIST partitioning that leaves a stored row out is refused.
    assert_eq!(
        errno(
            &mut s,
            "ALTER TABLE t PARTITION BY LIST (a) (PARTITION x VALUES IN (1, 15))"
        ),
        1526
    );
    // ... and the definition it replaced for a moment is back.
    assert_eq!(
        column(
            &mut s,
            "SELECT PARTITION_NAME FROM information_schema.PARTITIONS WHERE TABLE_NAME = 't'"
        ),
        "s0,s1,p1,p2"
    );
    ok(&mut s, "ALTER TABLE t PARTITION BY HASH (a) PARTITIONS 3");
    assert_eq!(errno(&mut s, "ALTER TABLE t DROP PARTITION p0"), 1512);
    assert_eq!(errno(&mut s, "ALTER TABLE t COALESCE PARTITION 3"), 1508);
    ok(&mut s, "ALTER TABLE t COALESCE PARTITION 1");
    ok(&mut s, "ALTER TABLE t ADD PARTITION PARTITIONS 2");
    assert_eq!(
        column(
            &mut s,
            "SELECT PARTITION_NAME FROM information_schema.PARTITIONS WHERE TABLE_NAME = 't'"
        ),
        "p0,p1,p2,p3"
    );
    ok(&mut s, "ALTER TABLE t REMOVE PARTITIONING");
    assert!(!show_create(&mut s, "t").contains("PARTITION"));
    assert_eq!(column(&mut s, "SELECT COUNT(*) FROM t"), "3");
    // A unique key added later must hold the partitioning columns.
    ok(&mut s, "ALTER TABLE t PARTITION BY KEY (a) PARTITIONS 2");
    assert_eq!(errno(&mut s, "ALTER TABLE t ADD UNIQUE KEY (b)"), 1503);
    ok(&mut s, "ALTER TABLE t ADD UNIQUE KEY (a, b)");
}

#[test]
fn show_create_table_prints_the_clause_as_mysql_8() {
    let mut s = session();
    ok(
        &mut s,
        "CREATE TABLE h (c1 INT NULL, c2 CHAR(5)) PARTITION BY HASH(c1) PARTITIONS 4",
    );
    assert!(show_create(&mut s, "h").ends_with(
        ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci\n\
         /*!50100 PARTITION BY HASH (`c1`)\nPARTITIONS 4 */"
    ));
    ok(
        &mut s,
        "CREATE TABLE h2 (d DATETIME) PARTITION BY HASH(YEAR(d))",
    );
    assert!(show_create(&mut s, "h2").ends_with("/*!50100 PARTITION BY HASH (year(`d`)) */"));
    ok(
        &mut s,
        "CREATE TABLE k (a INT, b INT) PARTITION BY LINEAR KEY ALGORITHM=2 (a, b) PARTITIONS 3",
    );
    assert!(show_create(&mut s, "k").ends_with(
        "/*!50100 PARTITION BY LINEAR KEY /*!50611 ALGORITHM = 2 */ (a,b)\nPARTITIONS 3 */"
    ));
    ok(
        &mut s,
        "CREATE TABLE r (a INT, d DATE) PARTITION BY RANGE (a + 1) \
         (PARTITION p0 VALUES LESS THAN (10) COMMENT = 'low', PARTITION p1 VALUES LESS THAN MAXVALUE)",
    );
    assert!(show_create(&mut s, "r").ends_with(
        "/*!50100 PARTITION BY RANGE (`a` + 1)\n\
         (PARTITION p0 VALUES LESS THAN (10) COMMENT = 'low' ENGINE = InnoDB,\n \
         PARTITION p1 VALUES LESS THAN MAXVALUE ENGINE = InnoDB) */"
    ));
    ok(
        &mut s,
        "CREATE TABLE lc (a INT, b VARCHAR(3)) PARTITION BY LIST COLUMNS (a, b) \
         (PARTITION p0 VALUES IN ((1, 'x'), (2, 'y')))",
    );
    assert!(show_create(&mut s, "lc").ends_with(
        "/*!50500 PARTITION BY LIST  COLUMNS(a,b)\n\
         (PARTITION p0 VALUES IN ((1,'x'),(2,'y')) ENGINE = InnoDB) */"
    ));
    ok(
        &mut s,
        "CREATE TABLE sp (d DATE) PARTITION BY RANGE (YEAR(d)) SUBPARTITION BY HASH (TO_DAYS(d)) \
         (PARTITION p0 VALUES LESS THAN (1990) (SUBPARTITION s0, SUBPARTITION s1), \
         PARTITION p1 VALUES LESS THAN MAXVALUE (SUBPARTITION s2, SUBPARTITION s3))",
    );
    assert!(show_create(&mut s, "sp").ends_with(
        "/*!50100 PARTITION BY RANGE (year(`d`))\nSUBPARTITION BY HASH (to_days(`d`))\n\
         (PARTITION p0 VALUES LESS THAN (1990)\n (SUBPARTITION s0 ENGINE = InnoDB,\n  SUBPARTITION s1 ENGINE = InnoDB),\n \
         PARTITION p1 VALUES LESS THAN MAXVALUE\n (SUBPARTITION s2 ENGINE = InnoDB,\n  SUBPARTITION s3 ENGINE = InnoDB)) */"
    ));
    // The printed clause re-creates the table (nested version comment
    // included).
    for t in ["h", "h2", "k", "r", "lc", "sp"] {
        let text = show_create(&mut s, t).replacen(&format!("`{t}`"), "`copy`", 1);
        ok(&mut s, &text);
        assert_eq!(
            show_create(&mut s, "copy").replacen("`copy`", &format!("`{t}`"), 1),
            show_create(&mut s, t)
        );
        ok(&mut s, "DROP TABLE copy");
    }
}

#[test]
fn information_schema_partitions_has_a_row_per_partition() {
    let mut s = session();
    ok(
        &mut s,
        "CREATE TABLE l (a INT) PARTITION BY LIST (a) \
         (PARTITION p0 VALUES IN (1, 2) COMMENT = 'small', PARTITION p1 VALUES IN (3, NULL))",
    );
    ok(&mut s, "CREATE TABLE plain (a INT)");
    assert_eq!(
        rows(
            &mut s,
            "SELECT TABLE_NAME, PARTITION_NAME, PARTITION_ORDINAL_POSITION, PARTITION_METHOD, \
             PARTITION_EXPRESSION, PARTITION_DESCRIPTION, PARTITION_COMMENT \
             FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = 'p' ORDER BY 1, 3"
        ),
        vec![
            vec!["l", "p0", "1", "LIST", "`a`", "1,2", "small"],
            vec!["l", "p1", "2", "LIST", "`a`", "3,NULL", ""],
            vec!["plain", "NULL", "NULL", "NULL", "NULL", "NULL", ""],
        ]
        .into_iter()
        .map(|r| r.into_iter().map(String::from).collect::<Vec<_>>())
        .collect::<Vec<_>>()
    );
    ok(
        &mut s,
        "CREATE TABLE sp (d DATE) PARTITION BY RANGE (YEAR(d)) SUBPARTITION BY HASH (TO_DAYS(d)) \
         SUBPARTITIONS 2 (PARTITION p0 VALUES LESS THAN (1990), PARTITION p1 VALUES LESS THAN MAXVALUE)",
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT PARTITION_NAME, SUBPARTITION_NAME, SUBPARTITION_METHOD, SUBPARTITION_EXPRESSION \
             FROM information_schema.PARTITIONS WHERE TABLE_NAME = 'sp'"
        )[1],
        vec!["p0", "p0sp1", "HASH", "to_days(`d`)"]
    );
}

#[test]
fn explain_shows_the_partitions_a_where_clause_leaves() {
    let mut s = session();
    ok(
        &mut s,
        "CREATE TABLE r (a INT, b INT) PARTITION BY RANGE (a) \
         (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN (20), \
         PARTITION p2 VALUES LESS THAN MAXVALUE)",
    );
    let parts = |s: &mut Session, sql: &str| rows(s, &format!("EXPLAIN {sql}"))[0][3].clone();
    assert_eq!(parts(&mut s, "SELECT * FROM r"), "p0,p1,p2");
    assert_eq!(parts(&mut s, "SELECT * FROM r WHERE a = 15"), "p1");
    assert_eq!(parts(&mut s, "SELECT * FROM r WHERE a IN (1, 25)"), "p0,p2");
    assert_eq!(parts(&mut s, "SELECT * FROM r WHERE a >= 12"), "p1,p2");
    assert_eq!(parts(&mut s, "SELECT * FROM r WHERE a < 10"), "p0");
    assert_eq!(
        parts(&mut s, "SELECT * FROM r WHERE a BETWEEN 5 AND 15"),
        "p0,p1"
    );
    assert_eq!(parts(&mut s, "DELETE FROM r WHERE a = 3"), "p0");
    ok(
        &mut s,
        "CREATE TABLE h (a INT, b INT) PARTITION BY HASH (a) PARTITIONS 4",
    );
    assert_eq!(parts(&mut s, "SELECT * FROM h WHERE a = -7"), "p3");
    assert_eq!(parts(&mut s, "SELECT * FROM h WHERE a IN (4, 5)"), "p0,p1");
    ok(&mut s, "CREATE TABLE plain (a INT)");
    assert_eq!(parts(&mut s, "SELECT * FROM plain WHERE a = 1"), "NULL");
    // A range through a non-decreasing function (YEAR) prunes too.
    ok(
        &mut s,
        "CREATE TABLE y (d DATE) PARTITION BY RANGE (YEAR(d)) \
         (PARTITION p0 VALUES LESS THAN (1990), PARTITION p1 VALUES LESS THAN (2000), \
         PARTITION p2 VALUES LESS THAN MAXVALUE)",
    );
    assert_eq!(
        parts(&mut s, "SELECT * FROM y WHERE d < '1992-01-01'"),
        "p0,p1"
    );
    assert_eq!(
        parts(&mut s, "SELECT * FROM y WHERE d >= '2000-01-01'"),
        "p2"
    );
    assert_eq!(
        parts(&mut s, "SELECT * FROM y WHERE d = '1995-05-05'"),
        "p1"
    );
    // KEY (): the primary key's columns.
    ok(
        &mut s,
        "CREATE TABLE k (a INT PRIMARY KEY, b INT) PARTITION BY KEY () PARTITIONS 4",
    );
    assert_eq!(
        parts(&mut s, "SELECT * FROM k WHERE a = 1")
            .split(',')
            .count(),
        1
    );
}

#[test]
fn what_is_not_implemented_is_refused() {
    let mut s = session();
    ok(
        &mut s,
        "CREATE TABLE h (a INT, b INT) PARTITION BY HASH (b) PARTITIONS 2",
    );
    for sql in [
        "SELECT * FROM h PARTITION (p0)",
        "DELETE FROM h PARTITION (p0)",
        "UPDATE h PARTITION (p0) SET a = 1",
        "ALTER TABLE h EXCHANGE PARTITION p0 WITH TABLE x",
    ] {
        assert!(
            matches!(run(&mut s, sql), Err(Error::Unsupported(_))),
            "{sql}"
        );
    }
    // No foreign keys to, from or on a partitioned table.
    ok(&mut s, "CREATE TABLE parent (b INT PRIMARY KEY)");
    assert_eq!(
        errno(
            &mut s,
            "CREATE TABLE c (b INT, FOREIGN KEY (b) REFERENCES h (b))"
        ),
        1506
    );
    assert_eq!(
        errno(
            &mut s,
            "ALTER TABLE h ADD FOREIGN KEY (b) REFERENCES parent (b)"
        ),
        1506
    );
    ok(
        &mut s,
        "CREATE TABLE child (b INT, FOREIGN KEY (b) REFERENCES parent (b))",
    );
    assert_eq!(
        errno(&mut s, "ALTER TABLE parent PARTITION BY HASH (b)"),
        1506
    );
    // A column of the partitioning function cannot be dropped.
    assert_eq!(errno(&mut s, "ALTER TABLE h DROP COLUMN b"), 1054);
    assert_eq!(
        column(
            &mut s,
            "SELECT CREATE_OPTIONS FROM information_schema.TABLES WHERE TABLE_NAME = 'h'"
        ),
        "partitioned"
    );
}

#[test]
fn partition_statements_in_a_multi_statement_text() {
    let mut s = session();
    let results = s.execute(
        "DROP TABLE IF EXISTS m; CREATE TABLE m (a INT) PARTITION BY HASH(a) PARTITIONS 2; \
         INSERT INTO m VALUES (1), (2); ALTER TABLE m COALESCE PARTITION 1; SELECT ';' AS x",
        true,
    );
    assert_eq!(results.len(), 5);
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert_eq!(
        column(
            &mut s,
            "SELECT COUNT(*) FROM information_schema.PARTITIONS WHERE TABLE_NAME = 'm'"
        ),
        "1"
    );
}

#[test]
fn partitioning_survives_a_restart() {
    let storage = std::sync::Arc::new(canyon_storage::MemoryStorage::new());
    {
        let e = common::open(&storage);
        e.bootstrap_root("").expect("root account");
        let mut s = e.session(1, "root", "localhost");
        ok(&mut s, "CREATE DATABASE p");
        ok(&mut s, "USE p");
        ok(
            &mut s,
            "CREATE TABLE t (a INT) PARTITION BY LIST (a) (PARTITION p0 VALUES IN (1))",
        );
    }
    let e = common::open(&storage);
    let mut s = e.session(1, "root", "localhost");
    ok(&mut s, "USE p");
    assert!(show_create(&mut s, "t").contains("PARTITION p0 VALUES IN (1) ENGINE = InnoDB"));
    assert_eq!(errno(&mut s, "INSERT INTO t VALUES (2)"), 1526);
}
