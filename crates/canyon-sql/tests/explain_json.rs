//! EXPLAIN FORMAT=JSON: the document parses, has MySQL 8.0's keys, and its
//! `table` objects say what the traditional EXPLAIN's rows say for the same
//! statement (both forms come from the same per-step values; this checks
//! they stay that way).

mod common;

use canyon_sql::Session;
use common::{engine, ok, rows};
use serde_json::Value as Json;
use std::time::Duration;

fn setup() -> Session {
    let e = engine(Duration::from_secs(5));
    let mut s = e.session(1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "USE d");
    ok(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10), KEY ka (a))",
    );
    ok(
        &mut s,
        "CREATE TABLE u (id INT PRIMARY KEY, t_id INT, c INT)",
    );
    ok(
        &mut s,
        "CREATE TABLE v (id INT PRIMARY KEY, u_id INT NOT NULL, KEY ku (u_id))",
    );
    let t: Vec<String> = (1..=50)
        .map(|i| format!("({i}, {}, 'b{i}')", i % 5))
        .collect();
    ok(&mut s, &format!("INSERT INTO t VALUES {}", t.join(",")));
    let u: Vec<String> = (1..=100)
        .map(|i| format!("({i}, {}, {i})", i % 50 + 1))
        .collect();
    ok(&mut s, &format!("INSERT INTO u VALUES {}", u.join(",")));
    ok(&mut s, "INSERT INTO v VALUES (1, 1), (2, 2), (3, 3)");
    s
}

fn doc(s: &mut Session, stmt: &str) -> Json {
    let r = rows(s, &format!("EXPLAIN FORMAT=JSON {stmt}"));
    assert_eq!(r.len(), 1, "one row");
    assert_eq!(r[0].len(), 1, "one column");
    assert!(
        r[0][0].contains("\n  \"query_block\": {\n    \"select_id\": 1"),
        "2-space indentation:\n{}",
        r[0][0]
    );
    serde_json::from_str(&r[0][0]).unwrap_or_else(|e| panic!("{stmt}: {e}\n{}", r[0][0]))
}

/// Every `table` object of the document (with its enclosing block's
/// `select_id`), in document order.
fn tables(j: &Json, id: i64, out: &mut Vec<(i64, Json)>) {
    match j {
        Json::Object(m) => {
            let id = m.get("select_id").and_then(Json::as_i64).unwrap_or(id);
            if let Some(t) = m.get("table") {
                out.push((id, t.clone()));
            }
            for (_, v) in m {
                tables(v, id, out);
            }
        }
        Json::Array(a) => a.iter().for_each(|v| tables(v, id, out)),
        _ => {}
    }
}

/// The JSON's tables agree with the traditional rows: same (id, table,
/// type, key, key_len, ref, rows) set.
fn agrees(s: &mut Session, stmt: &str) -> Json {
    let j = doc(s, stmt);
    let mut ts = Vec::new();
    tables(&j, 0, &mut ts);
    let mut from_json: Vec<Vec<String>> = ts
        .iter()
        .map(|(id, t)| {
            let st = |k: &str| {
                t.get(k)
                    .and_then(Json::as_str)
                    .unwrap_or("NULL")
                    .to_string()
            };
            let refs = t
                .get("ref")
                .and_then(Json::as_array)
                .map(|a| {
                    a.iter()
                        .map(|x| x.as_str().expect("a string").to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .unwrap_or("NULL".into());
            let rows = t
                .get("rows_examined_per_scan")
                .map(|r| r.as_i64().expect("an integer").to_string())
                .unwrap_or("NULL".into());
            vec![
                id.to_string(),
                st("table_name"),
                st("access_type"),
                st("key"),
                st("key_length"),
                refs,
                rows,
            ]
        })
        .collect();
    let mut from_table: Vec<Vec<String>> = rows(s, &format!("EXPLAIN {stmt}"))
        .into_iter()
        .filter(|r| r[2] != "NULL")
        .map(|r| {
            vec![
                r[0].clone(),
                r[2].clone(),
                r[4].clone(),
                r[6].clone(),
                r[7].clone(),
                r[8].clone(),
                r[9].clone(),
            ]
        })
        .collect();
    from_json.sort();
    from_table.sort();
    assert_eq!(from_json, from_table, "{stmt}\n{j:#}");
    j
}

#[test]
fn json_matches_traditional() {
    let mut s = setup();
    ok(&mut s, "ANALYZE TABLE t, u, v");
    for stmt in [
        "SELECT * FROM t",
        "SELECT * FROM t WHERE id = 3",
        "SELECT * FROM t WHERE a = 3",
        "SELECT * FROM t WHERE id BETWEEN 3 AND 9",
        "SELECT t.b, u.c, v.id FROM t JOIN u ON u.t_id = t.id JOIN v ON v.u_id = u.id WHERE t.a = 1",
        "SELECT a, COUNT(*) FROM t GROUP BY a ORDER BY COUNT(*) DESC",
        "SELECT x.a FROM (SELECT a, COUNT(*) n FROM t GROUP BY a) x WHERE x.n > 1",
        "SELECT b FROM t WHERE id IN (SELECT t_id FROM u WHERE c > 5)",
        "SELECT id FROM t UNION SELECT id FROM u",
        "UPDATE t SET b = 'x' WHERE id = 4",
        "DELETE FROM u WHERE c > 90 ORDER BY c",
        "SELECT t.id, u.c FROM t LEFT JOIN u ON u.t_id = t.id AND u.c > 3 WHERE t.a = 2",
        "SELECT id, ROW_NUMBER() OVER (PARTITION BY a ORDER BY id) FROM t",
        "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.t_id = t.id)",
        "SELECT * FROM t WHERE 1 = 0 AND id IN (SELECT t_id FROM u)",
        "WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r",
        "WITH x AS (SELECT a FROM t) SELECT * FROM x JOIN u ON u.id = x.a",
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'd'",
        "SELECT id FROM t UNION ALL SELECT id FROM u UNION SELECT id FROM v ORDER BY id LIMIT 3",
        "SELECT * FROM (SELECT id FROM t EXCEPT SELECT t_id FROM u) e",
        "UPDATE t JOIN u ON u.t_id = t.id SET t.b = 'y' WHERE u.c = 7",
        "DELETE t FROM t JOIN u ON u.t_id = t.id WHERE u.c = 7",
        "INSERT INTO v SELECT id + 100, t_id FROM u WHERE c < 3",
        "REPLACE INTO v VALUES (1, 1)",
        "UPDATE t SET b = (SELECT MAX(c) FROM u) WHERE a IN (SELECT t_id FROM u)",
    ] {
        agrees(&mut s, stmt);
    }
}

#[test]
fn json_keys() {
    let mut s = setup();
    ok(&mut s, "ANALYZE TABLE t, u, v");
    let j = agrees(&mut s, "SELECT * FROM t WHERE a = 3 AND b <> 'z'");
    let t = &j["query_block"]["table"];
    assert_eq!(t["access_type"], "ref");
    assert_eq!(t["possible_keys"], serde_json::json!(["ka"]));
    assert_eq!(t["used_key_parts"], serde_json::json!(["a"]));
    assert_eq!(t["key_length"], "5");
    assert_eq!(t["ref"], serde_json::json!(["const"]));
    assert_eq!(t["filtered"], "100.00");
    assert!(
        t["attached_condition"]
            .as_str()
            .expect("a condition")
            .contains("b"),
        "{t:#}"
    );
    assert_eq!(t["used_columns"], serde_json::json!(["id", "a", "b"]));
    // Costs are row counts: the query reads what its one step reads.
    assert_eq!(
        j["query_block"]["cost_info"]["query_cost"],
        t["cost_info"]["prefix_cost"]
    );

    let j = agrees(
        &mut s,
        "SELECT t.b, u.c FROM t JOIN u ON u.t_id = t.id JOIN v ON v.u_id = u.id",
    );
    let nl = j["query_block"]["nested_loop"]
        .as_array()
        .expect("a nested loop");
    assert_eq!(nl.len(), 3);
    assert!(nl.iter().all(|x| x["table"]["table_name"].is_string()));

    let j = agrees(
        &mut s,
        "SELECT a, COUNT(*) FROM t GROUP BY a ORDER BY COUNT(*) DESC",
    );
    let o = &j["query_block"]["ordering_operation"];
    assert_eq!(o["using_filesort"], true);
    assert_eq!(o["grouping_operation"]["using_temporary_table"], true);

    let j = agrees(&mut s, "SELECT DISTINCT a FROM t");
    assert_eq!(
        j["query_block"]["duplicates_removal"]["using_temporary_table"],
        true
    );

    let j = agrees(&mut s, "SELECT x.a FROM (SELECT a FROM t WHERE id < 10) x");
    let m = &j["query_block"]["table"]["materialized_from_subquery"];
    assert_eq!(m["query_block"]["select_id"], 2);
    assert_eq!(m["query_block"]["table"]["table_name"], "t");

    let j = agrees(
        &mut s,
        "SELECT b FROM t WHERE id IN (SELECT t_id FROM u WHERE c > 5)",
    );
    let subs = format!("{j}");
    assert!(
        subs.contains("attached_subqueries") || subs.contains("nested_loop"),
        "{j:#}"
    );

    let j = agrees(&mut s, "SELECT id, (SELECT MAX(c) FROM u) FROM t");
    assert_eq!(
        j["query_block"]["select_list_subqueries"][0]["query_block"]["select_id"],
        2
    );

    let j = agrees(&mut s, "SELECT id FROM t UNION SELECT id FROM u");
    let u = &j["query_block"]["table"]["materialized_from_subquery"]["query_block"]["union_result"];
    assert_eq!(
        u["query_specifications"]
            .as_array()
            .expect("an array")
            .len(),
        2
    );
    assert_eq!(u["using_temporary_table"], true);

    let j = doc(&mut s, "SELECT 1");
    assert_eq!(j["query_block"]["message"], "No tables used");
    let j = doc(&mut s, "SELECT * FROM t WHERE 1 = 0");
    assert_eq!(j["query_block"]["message"], "Impossible WHERE");

    let j = agrees(&mut s, "UPDATE t SET b = 'x' WHERE id = 4");
    assert_eq!(j["query_block"]["table"]["update"], true);
    assert_eq!(j["query_block"]["table"]["access_type"], "const");
}

#[test]
fn analyze_json_refused() {
    let mut s = setup();
    let e = common::run(&mut s, "EXPLAIN ANALYZE FORMAT=JSON SELECT * FROM t").unwrap_err();
    assert!(
        matches!(e, canyon_common::Error::Unsupported(_)),
        "1235: {e}"
    );
    assert!(
        e.to_string().contains("EXPLAIN ANALYZE with JSON format"),
        "{e}"
    );
}
