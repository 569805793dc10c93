//! FULLTEXT indexes through the engine API, for what the `.test` files
//! cannot show: SHOW CREATE TABLE's multi-line text (and that it creates the
//! same table again), the index read back from the stored catalog after a
//! restart with its entries intact, and a search at a snapshot while another
//! session changes the rows. (The search semantics are in
//! `tests/sql/64_fulltext.test`.)

mod common;

use canyon_sql::{QueryResult, Value};
use canyon_storage::MemoryStorage;
use std::sync::Arc;
use std::time::Duration;

use common::{ok, rows};

const CREATE: &str = "CREATE TABLE film_text (film_id SMALLINT NOT NULL, title VARCHAR(255) NOT NULL, \
     description TEXT, PRIMARY KEY (film_id), FULLTEXT KEY idx_title_description (title, description))";

#[test]
fn show_create_table_prints_the_fulltext_key() {
    let e = common::engine(Duration::from_secs(2));
    let mut s = e.session(1, "root", "localhost");
    for sql in ["CREATE DATABASE d", "USE d", CREATE] {
        ok(&mut s, sql);
    }
    let text = rows(&mut s, "SHOW CREATE TABLE film_text")[0][1].clone();
    assert_eq!(
        text,
        "CREATE TABLE `film_text` (\n  \
         `film_id` smallint NOT NULL,\n  \
         `title` varchar(255) NOT NULL,\n  \
         `description` text,\n  \
         PRIMARY KEY (`film_id`),\n  \
         FULLTEXT KEY `idx_title_description` (`title`,`description`)\n\
         ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    );
    ok(&mut s, "DROP TABLE film_text");
    ok(&mut s, &text);
    assert_eq!(rows(&mut s, "SHOW CREATE TABLE film_text")[0][1], text);
}

#[test]
fn the_index_survives_a_restart() {
    let storage = Arc::new(MemoryStorage::new());
    {
        let e = common::open(&storage);
        e.bootstrap_root("").expect("root account");
        let mut s = e.session(1, "root", "localhost");
        for sql in [
            "CREATE DATABASE d",
            "USE d",
            CREATE,
            "INSERT INTO film_text VALUES (1, 'ACADEMY DINOSAUR', 'An Epic Drama of a Feminist And a Mad Scientist'), \
             (2, 'ACE GOLDFINGER', 'A Astounding Epistle of a Database Administrator'), \
             (3, 'ADAPTATION HOLES', 'A Astounding Reflection of a Lumberjack And a Car')",
        ] {
            ok(&mut s, sql);
        }
    }
    let e = common::open(&storage);
    let mut s = e.session(1, "root", "localhost");
    ok(&mut s, "USE d");
    assert_eq!(
        rows(
            &mut s,
            "SELECT film_id FROM film_text WHERE MATCH (title, description) AGAINST ('astounding')"
        ),
        [["2"], ["3"]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT film_id FROM film_text WHERE MATCH (title, description) AGAINST ('+astounding -car' IN BOOLEAN MODE)"
        ),
        [["2"]]
    );
}

#[test]
fn a_snapshot_searches_the_rows_it_sees() {
    let e = common::engine(Duration::from_secs(2));
    let mut a = e.session(1, "root", "localhost");
    let mut b = e.session(2, "root", "localhost");
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        CREATE,
        "INSERT INTO film_text VALUES (1, 'ALPHA', 'zebra'), (2, 'BETA', 'lion')",
    ] {
        ok(&mut a, sql);
    }
    ok(&mut b, "USE d");
    ok(
        &mut a,
        "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    );
    ok(&mut a, "BEGIN");
    let q = "SELECT film_id, MATCH (title, description) AGAINST ('zebra') > 0 \
             FROM film_text WHERE MATCH (title, description) AGAINST ('zebra')";
    assert_eq!(rows(&mut a, q), [["1", "1"]]);
    ok(
        &mut b,
        "UPDATE film_text SET description = 'zebra zebra' WHERE film_id = 2",
    );
    ok(
        &mut b,
        "UPDATE film_text SET description = 'horse' WHERE film_id = 1",
    );
    // The snapshot still sees row 1 with its zebra, and not row 2's.
    assert_eq!(rows(&mut a, q), [["1", "1"]]);
    ok(&mut a, "COMMIT");
    assert_eq!(rows(&mut a, q), [["2", "1"]]);
}

#[test]
fn a_prepared_search_takes_its_string_as_a_parameter() {
    let e = common::engine(Duration::from_secs(2));
    let mut s = e.session(1, "root", "localhost");
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        CREATE,
        "INSERT INTO film_text VALUES (1, 'ALPHA', 'zebra lion'), (2, 'BETA', 'lion'), (3, 'GAMMA', 'tiger')",
    ] {
        ok(&mut s, sql);
    }
    let p = s
        .prepare("SELECT film_id FROM film_text WHERE MATCH (title, description) AGAINST (?)")
        .expect("prepares");
    let ids = |r: QueryResult| match r {
        QueryResult::Rows { rows, .. } => {
            rows.iter().map(|r| r[0].to_display()).collect::<Vec<_>>()
        }
        other => panic!("rows expected, got {other:?}"),
    };
    // Ranked: the rarer word weighs more, so row 1 (zebra and lion) first.
    let r = s
        .execute_prepared(p.id, &[Value::str("lion zebra")])
        .expect("runs");
    assert_eq!(ids(r), ["1", "2"]);
    let r = s
        .execute_prepared(p.id, &[Value::str("tiger")])
        .expect("runs");
    assert_eq!(ids(r), ["3"]);
    let r = s.execute_prepared(p.id, &[Value::Null]).expect("runs");
    assert!(ids(r).is_empty());
}
