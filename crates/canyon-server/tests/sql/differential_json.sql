-- Differential script (JSON): see the header of differential.sql for the format rules.
-- MySQL 8's JSON type and functions (crates/canyon-sql/src/types/json.rs,
-- crates/canyon-sql/src/expr/functions_json.rs) against MariaDB 10.11, whose JSON is
-- LONGTEXT with a CHECK (JSON_VALID): only statements where MySQL 8 and MariaDB agree
-- are compared value for value; the others are marked `-- differs`.
--
-- Left out on purpose (MariaDB differs from MySQL 8, which Canyon follows):
--   * objects whose keys are not already in MySQL's order (by length, then bytes):
--     MariaDB stores and prints documents as written, MySQL 8 normalises them;
--   * `->` / `->>` (MariaDB: 1064); comparisons and ORDER BY of JSON values (MariaDB
--     compares the text);
--   * JSON_TYPE of big integers and JSON_SEARCH with mixed case (collation-dependent);
--   * errors: a bad path (MySQL 8: 3143; MariaDB: warning 4042 and NULL) and invalid
--     JSON text stored in a JSON column (MySQL 8: 3140; MariaDB: 4025 from its CHECK)
--     have different outcomes; crates/canyon-sql/tests/sql/json.test checks them.
DROP DATABASE IF EXISTS diff_json;
CREATE DATABASE diff_json;
USE diff_json;
CREATE TABLE t (id INT PRIMARY KEY, j JSON);
INSERT INTO t VALUES (1, '{"a": 1, "b": [1, 2]}'), (2, '[3, "x", null, true]'), (3, '"str"'), (4, '42'), (5, NULL), (6, '{"a": {"c": "deep"}, "bb": 1.5}');
SELECT id, j FROM t ORDER BY id;
SELECT id, JSON_EXTRACT(j, '$.a') AS a, JSON_EXTRACT(j, '$.b[1]') AS b1, JSON_EXTRACT(j, '$[1]') AS e1 FROM t ORDER BY id;
SELECT JSON_EXTRACT('[1, 2, 3]', '$[last]') AS c1, JSON_EXTRACT('[1, 2, 3]', '$[*]') AS c2, JSON_EXTRACT('{"a": 1, "b": {"a": 2}}', '$**.a') AS c3, JSON_EXTRACT('{"x": 1, "y": 2}', '$.*') AS c4;
SELECT JSON_EXTRACT('{"a": 1, "b": 2}', '$.a', '$.b') AS c1, JSON_EXTRACT('{"a": 1}', '$.z') AS c2, JSON_EXTRACT(NULL, '$') AS c3, JSON_EXTRACT('{"a b": 5}', '$."a b"') AS c4;
SELECT JSON_UNQUOTE('"a\\tb"') AS c1, JSON_UNQUOTE('plain') AS c2, JSON_UNQUOTE(NULL) AS c3, JSON_QUOTE('a"b') AS c4, JSON_QUOTE(NULL) AS c5;
SELECT JSON_OBJECT('a', 1) AS c1, JSON_OBJECT('a', 'x', 'b', NULL) AS c2, JSON_ARRAY(1, 'two', NULL) AS c3, JSON_OBJECT() AS c4, JSON_ARRAY() AS c5;
-- differs: MariaDB warns (4038) for each text that is no JSON; MySQL 8 and Canyon return 0 without a warning.
SELECT JSON_VALID('{"a": 1}') AS c1, JSON_VALID('{a: 1}') AS c2, JSON_VALID(NULL) AS c3, JSON_VALID('') AS c4, JSON_VALID('[1, 2') AS c5;
SELECT JSON_TYPE('1') AS c1, JSON_TYPE('1.5') AS c2, JSON_TYPE('true') AS c3, JSON_TYPE('null') AS c4, JSON_TYPE('[]') AS c5, JSON_TYPE('{}') AS c6, JSON_TYPE('"a"') AS c7;
SELECT JSON_LENGTH('[1, [2, 3]]') AS c1, JSON_LENGTH('{"a": 1, "b": 2}') AS c2, JSON_LENGTH('7') AS c3, JSON_LENGTH('[1, [2, 3]]', '$[1]') AS c4, JSON_LENGTH('[1]', '$[5]') AS c5;
SELECT JSON_DEPTH('[]') AS c1, JSON_DEPTH('1') AS c2, JSON_DEPTH('[1, [2]]') AS c3, JSON_DEPTH('{"a": {"b": []}}') AS c4, JSON_DEPTH('{"a": {"b": [1]}}') AS c5;
SELECT JSON_KEYS('{"a": 1, "b": {"c": 2}}') AS c1, JSON_KEYS('{"a": 1, "b": {"c": 2}}', '$.b') AS c2, JSON_KEYS('[1]') AS c3;
SELECT JSON_CONTAINS('{"a": 1, "b": [1, 2]}', '1', '$.a') AS c1, JSON_CONTAINS('{"a": 1, "b": [1, 2]}', '{"b": [2]}') AS c2, JSON_CONTAINS('[1, 2, [3]]', '[1, 3]') AS c3, JSON_CONTAINS('[1, 2]', '"1"') AS c4, JSON_CONTAINS('[1, 2]', '3') AS c5;
SELECT JSON_CONTAINS_PATH('{"a": 1, "b": {"c": 2}}', 'one', '$.x', '$.b.c') AS c1, JSON_CONTAINS_PATH('{"a": 1, "b": {"c": 2}}', 'all', '$.x', '$.b.c') AS c2, JSON_CONTAINS_PATH('{"a": 1}', 'all', '$.a') AS c3;
SELECT JSON_SET('{"a": 1}', '$.a', 10, '$.b', 'new') AS c1, JSON_INSERT('{"a": 1}', '$.a', 10, '$.b', 'new') AS c2, JSON_REPLACE('{"a": 1}', '$.a', 10, '$.b', 'new') AS c3;
SELECT JSON_SET('[1, 2]', '$[5]', 3) AS c1, JSON_SET('[1, 2]', '$[0]', 'x') AS c2, JSON_INSERT('{"a": 1}', '$.b.c', 1) AS c3, JSON_REPLACE('[1]', '$[3]', 2) AS c4;
SELECT JSON_REMOVE('{"a": 1, "b": [1, 2, 3]}', '$.a', '$.b[2]') AS c1, JSON_REMOVE('[1, 2]', '$[7]') AS c2, JSON_REMOVE('[1, 2]', '$[0]') AS c3;
SELECT JSON_ARRAY_APPEND('[1, [2]]', '$[1]', 3, '$', 4) AS c1, JSON_ARRAY_APPEND('{"a": 1}', '$.a', 2) AS c2, JSON_ARRAY_INSERT('[1, 2]', '$[1]', 'x') AS c3, JSON_ARRAY_INSERT('[1, 2]', '$[9]', 'z') AS c4;
SELECT JSON_MERGE_PRESERVE('{"a": 1}', '{"a": 2}') AS c1, JSON_MERGE_PRESERVE('[1]', '2') AS c2, JSON_MERGE_PATCH('{"a": 1, "b": 2}', '{"a": null}') AS c3, JSON_MERGE_PATCH('{"a": 1}', '[9]') AS c4, JSON_MERGE_PATCH('{"a": 1}', '{"a": {"d": 4}}') AS c5;
SELECT JSON_SEARCH('{"a": "abc", "b": ["x", "abc"]}', 'one', 'abc') AS c1, JSON_SEARCH('{"a": "abc", "b": ["x", "abc"]}', 'all', 'ab%') AS c2, JSON_SEARCH('["x"]', 'one', 'y') AS c3;
UPDATE t SET j = JSON_SET(j, '$.a', 100) WHERE id = 1;
SELECT j FROM t WHERE id = 1;
SELECT id FROM t WHERE JSON_EXTRACT(j, '$.a') = 100 ORDER BY id;
SELECT id FROM t WHERE JSON_UNQUOTE(JSON_EXTRACT(j, '$[1]')) = 'x' ORDER BY id;
SELECT id FROM t WHERE JSON_CONTAINS(j, '2', '$.b') ORDER BY id;
SELECT COUNT(*) AS n FROM t WHERE JSON_VALID(j);
SELECT id, JSON_LENGTH(j) AS len, JSON_TYPE(j) AS ty FROM t ORDER BY id;
CREATE TABLE g (grp INT, k VARCHAR(5), v INT);
INSERT INTO g VALUES (1, 'x', 1), (1, 'y', NULL), (2, 'z', 3);
-- differs: MariaDB prints JSON_ARRAYAGG / JSON_OBJECTAGG without spaces ([1,null]); MySQL 8 and Canyon normalise ([1, null]).
SELECT grp, JSON_ARRAYAGG(v) AS a, JSON_OBJECTAGG(k, v) AS o FROM g GROUP BY grp ORDER BY grp;
SELECT JSON_EXTRACT('{"a": 1}', '$.a') + 1 AS c1, CONCAT('j: ', JSON_ARRAY(1, 2)) AS c2;
DROP DATABASE diff_json;
