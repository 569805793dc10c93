-- Differential script (subquery and row forms): ANY / SOME / ALL with their
-- NULL rules, row constructors compared with = <> <=> < <= > >=, row
-- subqueries, row IN lists and IN subqueries, LIMIT in an IN / ANY / ALL
-- subquery (1235 in both), EXISTS in every clause, correlated subqueries in
-- UPDATE and DELETE, _rowid. Also in
-- crates/canyon-sql/tests/sql/69_subquery_forms.test, which also holds what
-- this script cannot compare: a row compared with a scalar (MySQL 8 and
-- Canyon: 1241; MariaDB: 4078), ROW(1) (a syntax error in both, worded
-- differently), and correlated UPDATE / DELETE with ORDER BY or LIMIT
-- (Canyon: 1235).
DROP DATABASE IF EXISTS diff_subq;
CREATE DATABASE diff_subq;
USE diff_subq;
CREATE TABLE t1 (id INT PRIMARY KEY, a INT, b INT);
INSERT INTO t1 VALUES (1,1,10),(2,2,20),(3,NULL,30),(4,4,NULL);
CREATE TABLE t2 (x INT, y INT);
INSERT INTO t2 VALUES (1,10),(2,20),(NULL,NULL);
CREATE TABLE nn (x INT);
INSERT INTO nn VALUES (1),(2);
CREATE TABLE e (x INT);
SELECT id FROM t1 WHERE a = ANY (SELECT x FROM t2) ORDER BY id;
SELECT id FROM t1 WHERE a = SOME (SELECT x FROM t2) ORDER BY id;
SELECT id, a = ANY (SELECT x FROM t2) AS c1, a <> ALL (SELECT x FROM t2) AS c2, a <> ALL (SELECT x FROM nn) AS c3 FROM t1 ORDER BY id;
SELECT id, a > ANY (SELECT x FROM t2) AS c1, a > ALL (SELECT x FROM t2) AS c2, a >= ALL (SELECT x FROM nn) AS c3, a < ANY (SELECT x FROM nn) AS c4 FROM t1 ORDER BY id;
SELECT id FROM t1 WHERE a > ALL (SELECT x FROM t2 WHERE x IS NOT NULL) ORDER BY id;
SELECT id FROM t1 WHERE a <= SOME (SELECT x FROM nn) ORDER BY id;
SELECT 1 <> ANY (SELECT x FROM nn) AS c1, 1 <> ANY (SELECT x FROM nn WHERE x = 1) AS c2, 1 = ALL (SELECT x FROM nn WHERE x = 1) AS c3, 1 = ALL (SELECT x FROM nn) AS c4, 1 = ALL (SELECT x FROM t2 WHERE x = 1 OR x IS NULL) AS c5;
SELECT 1 > ALL (SELECT x FROM e) AS c1, 1 > ANY (SELECT x FROM e) AS c2, NULL > ALL (SELECT x FROM e) AS c3, NULL = ANY (SELECT x FROM e) AS c4, NULL <> ALL (SELECT x FROM e) AS c5, NULL > ANY (SELECT x FROM nn) AS c6;
SELECT id FROM t1 WHERE b > ALL (SELECT y FROM t2 WHERE t2.x < t1.a) ORDER BY id;
SELECT id, (SELECT COUNT(*) FROM t2 WHERE t2.y >= ALL (SELECT b FROM t1 x WHERE x.id <= t1.id)) AS c FROM t1 ORDER BY id;
SELECT 1 > ANY (SELECT x, y FROM t2) AS c;
SELECT 1 = ANY (SELECT x, y FROM t2) AS c;
SELECT (1, 10) < ANY (SELECT x, y FROM t2) AS c;
SELECT (1, 10) = ANY (SELECT x, y FROM t2) AS c1, (1, 11) = ANY (SELECT x, y FROM t2) AS c2, (1, 11) <> ALL (SELECT t2.x, t2.y FROM nn, t2 WHERE nn.x = t2.x) AS c3;
SELECT (1,2) = (1,2) AS c1, (1,2) <> (1,2) AS c2, ROW(1,2) = ROW(1,3) AS c3, (1,2) = ROW(1,NULL) AS c4, (1,NULL) = (2,NULL) AS c5, (1,NULL) <> (2,NULL) AS c6, (1,NULL) <> (1,NULL) AS c7;
SELECT (1,2) < (1,3) AS c1, (1,3) < (1,2) AS c2, (1,2) <= (1,2) AS c3, (1,2) < (1,2) AS c4, (2,0) > (1,9) AS c5, (1,2) >= (1,3) AS c6;
SELECT (1,NULL) < (2,NULL) AS c1, (1,NULL) < (1,2) AS c2, (NULL,1) < (2,1) AS c3, (2,NULL) > (1,5) AS c4, (1,2,3) < (1,2,NULL) AS c5;
SELECT (1,NULL) <=> (1,NULL) AS c1, (NULL,NULL) <=> (NULL,1) AS c2, (1,2) <=> (1,2) AS c3;
SELECT (1,(2,3)) = (1,(2,3)) AS c1, ROW(1,ROW(2,3)) < (1,(2,4)) AS c2;
SELECT id FROM t1 WHERE (a, b) = (2, 20) OR (a, b) > (3, 0) ORDER BY id;
SELECT id FROM t1 WHERE (a, b) IN ((1,10),(4,NULL),(NULL,30)) ORDER BY id;
SELECT (1,2) IN ((1,2),(3,4)) AS c1, (5,6) IN ((1,2),(3,4)) AS c2, (5,6) NOT IN ((1,2),(NULL,4)) AS c3, (5,6) NOT IN ((5,NULL)) AS c4;
SELECT (1,2) = (1,2,3) AS c;
SELECT (1,(2,3)) = ((1,2),3) AS c;
SELECT (1,2) = (SELECT 1,2) AS c1, (1,2) = (SELECT 1,2 FROM t2 WHERE 0) AS c2, (1,10) = (SELECT x, y FROM t2 WHERE x = 1) AS c3, (SELECT x, y FROM t2 WHERE x = 2) > (2, 19) AS c4;
SELECT (NULL,NULL) <=> (SELECT x, y FROM t2 WHERE 0) AS c1, (SELECT 1, 2) = (SELECT 1, 2) AS c2, ROW(1, 2) <> (SELECT 1, 3) AS c3;
SELECT id FROM t1 WHERE (a, b) = (SELECT x, y FROM t2 WHERE t2.x = t1.id) ORDER BY id;
SELECT id FROM t1 WHERE (a, b) IN (SELECT x, y FROM t2) ORDER BY id;
SELECT (1,10) IN (SELECT x, y FROM t2) AS c1, (1,11) IN (SELECT x, y FROM t2) AS c2, (1,11) NOT IN (SELECT x, y FROM t2 WHERE x IS NOT NULL) AS c3;
SELECT (1,2) = (SELECT x, y FROM t2) AS c;
SELECT (1,2) = (SELECT 1,2,3) AS c;
SELECT (1,2) IN (SELECT x FROM t2) AS c;
SELECT 1 IN (SELECT x, y FROM t2) AS c;
SELECT id FROM t1 WHERE a IN (SELECT x FROM t2 ORDER BY x LIMIT 1);
SELECT id FROM t1 WHERE a NOT IN (SELECT x FROM t2 LIMIT 1);
SELECT id FROM t1 WHERE a > ANY (SELECT x FROM t2 LIMIT 2);
SELECT id FROM t1 WHERE a = ALL (SELECT x FROM t2 LIMIT 2);
SELECT id FROM t1 WHERE (a, b) IN (SELECT x, y FROM t2 LIMIT 2);
SELECT id FROM t1 WHERE a IN (SELECT x FROM t2 ORDER BY x DESC) ORDER BY id;
SELECT id FROM t1 WHERE a IN (SELECT x FROM (SELECT x FROM t2 ORDER BY x DESC LIMIT 1) d) ORDER BY id;
SELECT (SELECT x FROM t2 ORDER BY x DESC LIMIT 1) AS c1, EXISTS (SELECT x FROM t2 LIMIT 1) AS c2;
SELECT id, EXISTS (SELECT 1 FROM t2 WHERE x = t1.a) AS c1, NOT EXISTS (SELECT 1 FROM e) AS c2 FROM t1 ORDER BY id;
SELECT id FROM t1 WHERE NOT EXISTS (SELECT 1 FROM t2 WHERE x = t1.a) ORDER BY id;
SELECT id FROM t1 ORDER BY EXISTS (SELECT 1 FROM t2 WHERE x = t1.a), id;
SELECT a, COUNT(*) AS n FROM t1 GROUP BY a HAVING EXISTS (SELECT 1 FROM t2 WHERE x = t1.a) ORDER BY a;
SELECT COUNT(*) AS n FROM t1 HAVING NOT EXISTS (SELECT 1 FROM e);
SELECT t1.id, t2.y FROM t1 LEFT JOIN t2 ON EXISTS (SELECT 1 FROM nn WHERE nn.x = t1.a) AND t2.x = t1.a ORDER BY t1.id;
CREATE TABLE u (id INT PRIMARY KEY, a INT, b INT);
INSERT INTO u VALUES (1,1,10),(2,2,20),(3,NULL,30),(4,4,NULL);
UPDATE u SET b = EXISTS (SELECT 1 FROM t2 WHERE x = u.a) WHERE NOT EXISTS (SELECT 1 FROM t2 WHERE y = u.b);
SELECT * FROM u ORDER BY id;
UPDATE u SET b = (SELECT y FROM t2 WHERE x = u.a) WHERE a > ANY (SELECT x FROM nn);
SELECT * FROM u ORDER BY id;
UPDATE u AS v SET v.b = 7 WHERE (v.a, 10) IN (SELECT x, y FROM t2 WHERE t2.x = v.id);
SELECT * FROM u ORDER BY id;
DELETE FROM u WHERE EXISTS (SELECT 1 FROM t2 WHERE x = u.a AND y = 20);
SELECT id FROM u ORDER BY id;
DELETE FROM u WHERE u.a < ALL (SELECT x + u.id FROM nn);
SELECT id FROM u ORDER BY id;
SELECT _rowid AS r, id FROM t1 WHERE _rowid > 2 ORDER BY _rowid;
SELECT t1._rowid AS r FROM t1 WHERE t1._ROWID = 2;
SELECT _rowid FROM t2;
CREATE TABLE uq (c VARCHAR(5), k BIGINT NOT NULL, UNIQUE KEY (k));
INSERT INTO uq VALUES ('p', 7), ('q', 9);
SELECT _rowid AS r, c FROM uq ORDER BY _rowid;
CREATE TABLE cpk (a INT, b INT, PRIMARY KEY (a, b));
SELECT _rowid FROM cpk;
CREATE TABLE nul (k INT, UNIQUE KEY (k));
SELECT _rowid FROM nul;
SELECT id FROM t1 WHERE EXISTS (SELECT 1 FROM uq WHERE uq._rowid = t1._rowid + 6) ORDER BY id;
DROP DATABASE diff_subq;
