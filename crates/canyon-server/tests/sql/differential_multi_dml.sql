-- Differential script (multi-table DML and DML modifiers): see the header of
-- differential.sql for the format rules. Multi-table UPDATE / DELETE (comma and
-- JOIN forms, aliases, USING, LEFT JOIN targets, correlated subqueries, triggers,
-- foreign keys, tables without a primary key, MySQL's errors) and the IGNORE /
-- LOW_PRIORITY / QUICK / DELAYED modifiers; the same cases are in
-- crates/canyon-sql/tests/sql/66_multi_table_dml.test and 66_dml_modifiers.test,
-- from which this script is made (one statement per block), less the statements
-- whose outcome differs (DELAYED: MariaDB 1616; ORDER BY / LIMIT and a subquery
-- reading a target in a multi-table UPDATE: MariaDB runs them, MySQL 8 refuses).
DROP DATABASE IF EXISTS diff_mt;
CREATE DATABASE diff_mt;
USE diff_mt;

-- Multi-table UPDATE and DELETE (MySQL 8.0 manual 15.2.17, 15.2.2): comma and
-- JOIN forms, aliases, DELETE ... FROM and DELETE FROM ... USING, each target
-- row written once however many join rows meet it, correlated subqueries,
-- triggers, foreign keys, tables without a primary key, affected-row counts,
-- MySQL's errors, and statement atomicity. The same statements are compared
-- with MariaDB in crates/canyon-server/tests/sql/differential_multi_dml.sql.
CREATE TABLE t1 (id INT PRIMARY KEY, a INT, b VARCHAR(10));
CREATE TABLE t2 (id INT PRIMARY KEY, t1_id INT, v INT);
INSERT INTO t1 VALUES (1, 10, 'x'), (2, 20, 'y'), (3, 30, 'z');
INSERT INTO t2 VALUES (1, 1, 100), (2, 1, 200), (3, 2, 300), (4, 9, 400);

-- ---- UPDATE, comma form: t1 row 1 is met twice, updated once ----------------
UPDATE t1, t2 SET t1.a = t1.a + 1 WHERE t1.id = t2.t1_id;
SELECT id, a, b FROM t1 ORDER BY id;

-- ---- UPDATE ... JOIN ... ON, SET from the other table -----------------------
UPDATE t1 JOIN t2 ON t2.t1_id = t1.id SET t1.b = CONCAT('v', t2.v) WHERE t2.v >= 200;
SELECT id, a, b FROM t1 ORDER BY id;

-- Both tables written by one statement; unqualified columns resolve to the
-- one table that has them.
UPDATE t1 AS x INNER JOIN t2 AS y ON y.t1_id = x.id SET x.a = 0, y.v = v + 1, b = 'both';
SELECT id, a, b FROM t1 ORDER BY id;
SELECT id, t1_id, v FROM t2 ORDER BY id;

-- Rows matched but left as they were count nothing.
UPDATE t1, t2 SET t1.a = 0 WHERE t1.id = t2.t1_id;

-- LEFT JOIN: a target row the outer join did not find is not written.
UPDATE t2 LEFT JOIN t1 ON t1.id = t2.t1_id SET t2.v = IFNULL(t1.a, -1), t1.a = 5;
SELECT id, t1_id, v FROM t2 ORDER BY id;
SELECT id, a FROM t1 ORDER BY id;

-- A correlated subquery in SET and WHERE (reading a table not written).
CREATE TABLE w (k INT, n INT);
INSERT INTO w VALUES (1, 7), (1, 8), (2, 9);
UPDATE t1, t2 SET t1.a = (SELECT SUM(n) FROM w WHERE w.k = t1.id) WHERE t1.id = t2.t1_id AND EXISTS (SELECT 1 FROM w WHERE w.k = t2.t1_id);
SELECT id, a FROM t1 ORDER BY id;

-- EXPLAIN shows the join the targets are written over.

-- ---- errors -------------------------------------------------------------------
UPDATE t1, t2 SET id = 1;
UPDATE t1, t2 SET t1.nope = 1;
UPDATE t1, t2 SET t3.a = 1;

-- ---- atomicity: a duplicate key on the second target row undoes the first -----
CREATE TABLE u (id INT PRIMARY KEY, k INT, UNIQUE KEY (k));
INSERT INTO u VALUES (1, 1), (2, 2), (3, 3);
UPDATE u, t1 SET u.k = IF(u.id = 1, 10, 3) WHERE u.id = t1.id - 1 AND t1.id IN (2, 3);
SELECT id, k FROM u ORDER BY id;

-- UPDATE IGNORE: the colliding row keeps its values, with warning 1062.
-- differs: MariaDB counts the skipped row as changed and gives no warning; MySQL 8 warns
UPDATE IGNORE u, t1 SET u.k = u.k + 10 * (u.id = 1) + (u.id = 2) WHERE u.id = t1.id;
-- differs: MariaDB words some messages differently, and refuses DELAYED (1616)
SHOW WARNINGS;
SELECT id, k FROM u ORDER BY id;

-- ---- DELETE ------------------------------------------------------------------------
CREATE TABLE p (id INT PRIMARY KEY, g INT);
CREATE TABLE c (id INT PRIMARY KEY, pid INT, note VARCHAR(10));
INSERT INTO p VALUES (1, 1), (2, 1), (3, 2), (4, 3);
INSERT INTO c VALUES (10, 1, 'a'), (11, 1, 'b'), (12, 2, 'c'), (13, 3, 'd'), (14, 7, 'e');

-- Both targets: p rows 1 and 2 and their children.
DELETE p, c FROM p JOIN c ON c.pid = p.id WHERE p.g = 1;
SELECT id FROM p ORDER BY id;
SELECT id FROM c ORDER BY id;

-- DELETE FROM ... USING with an alias; only the named target loses rows.
DELETE FROM x USING c AS x, p AS y WHERE x.pid = y.id;
SELECT id FROM c ORDER BY id;
SELECT id FROM p ORDER BY id;

-- DELETE a FROM t AS a with a correlated subquery.
DELETE a FROM p AS a JOIN p AS b ON b.id = a.id WHERE NOT EXISTS (SELECT 1 FROM c WHERE c.pid = a.id + 10);
SELECT COUNT(*) FROM p;

-- Errors: an unknown target (1109), a target named twice (1066), a subquery
-- reading a target (1093), ORDER BY / LIMIT (a syntax error in MySQL 8).
DELETE p FROM c;
DELETE p FROM p AS q;
DELETE c, c FROM c;
DELETE c FROM c, p WHERE c.id IN (SELECT id FROM c);
DELETE c FROM c, p ORDER BY c.id;
DELETE c FROM c, p LIMIT 1;

-- ---- triggers fire once per written row ------------------------------------
CREATE TABLE log (msg VARCHAR(40));
INSERT INTO p VALUES (1, 1), (2, 2);
INSERT INTO c VALUES (20, 1, 'a'), (21, 1, 'b'), (22, 2, 'c');
CREATE TRIGGER p_bu BEFORE UPDATE ON p FOR EACH ROW SET NEW.g = NEW.g * 10;
CREATE TRIGGER p_au AFTER UPDATE ON p FOR EACH ROW INSERT INTO log VALUES (CONCAT('upd ', OLD.id, ' ', OLD.g, '->', NEW.g));
CREATE TRIGGER c_ad AFTER DELETE ON c FOR EACH ROW INSERT INTO log VALUES (CONCAT('del ', OLD.id));
UPDATE p, c SET p.g = p.g + 1 WHERE c.pid = p.id;
SELECT id, g FROM p ORDER BY id;
DELETE c FROM c, p WHERE c.pid = p.id AND p.id = 1;
SELECT msg FROM log ORDER BY msg;

-- ---- foreign keys -------------------------------------------------------------------
CREATE TABLE fp (id INT PRIMARY KEY);
CREATE TABLE fc (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES fp (id) ON DELETE CASCADE);
INSERT INTO fp VALUES (1), (2);
INSERT INTO fc VALUES (1, 1), (2, 2);
UPDATE fc, fp SET fc.pid = 9 WHERE fc.id = fp.id;
-- differs: MariaDB counts the skipped row as changed and gives no warning; MySQL 8 warns
UPDATE IGNORE fc, fp SET fc.pid = fc.pid + 1 WHERE fc.id = fp.id;
SELECT id, pid FROM fc ORDER BY id;
DELETE fp FROM fp, t1 WHERE fp.id = t1.id AND t1.id = 2;
SELECT COUNT(*) FROM fc;

-- ---- tables without a primary key: every equal row is the met row ---------------
CREATE TABLE np (a INT, b VARCHAR(5));
INSERT INTO np VALUES (1, 'a'), (1, 'a'), (2, 'b'), (3, 'c');
UPDATE np, t1 SET np.b = UPPER(np.b) WHERE np.a = t1.id AND t1.id < 3;
SELECT a, b FROM np ORDER BY a, b;
DELETE np FROM np, t1 WHERE np.a = t1.id AND t1.id = 1;
SELECT a, b FROM np ORDER BY a;

-- Targets written `t.*`, in both DELETE forms.
DELETE np.* FROM np, t1 WHERE np.a = t1.id AND t1.id = 2;
DELETE FROM np.* USING np, t1 WHERE np.a = t1.id;
SELECT COUNT(*) FROM np;
DROP TABLE t1, t2, w, u, p, c, log, fc, fp, np;

-- The modifiers of INSERT / UPDATE / DELETE, MySQL 8 semantics: LOW_PRIORITY,
-- QUICK and HIGH_PRIORITY are accepted and change nothing; DELAYED runs the
-- plain statement with warning 3005; IGNORE turns the errors MySQL downgrades
-- into warnings (duplicate key: the row is skipped / keeps its values; data
-- conversion errors store the adjusted value even in strict mode; NULL into
-- NOT NULL in an UPDATE stores the implicit default; a missing parent skips
-- the row) for INSERT, UPDATE and DELETE alike.
CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, s VARCHAR(3), UNIQUE KEY (k));
INSERT LOW_PRIORITY INTO t VALUES (1, 1, 'a');
INSERT HIGH_PRIORITY INTO t VALUES (2, 2, 'b');
INSERT INTO t VALUES (3, 3, 'c');
REPLACE INTO t VALUES (4, 4, 'd');
CREATE TABLE dl (id INT);
UPDATE LOW_PRIORITY t SET s = 'x' WHERE id = 1;
DELETE LOW_PRIORITY QUICK FROM t WHERE id = 4;
SELECT id, k, s FROM t ORDER BY id;

-- ---- UPDATE IGNORE ------------------------------------------------------------------

-- Without IGNORE a duplicate fails the statement and undoes it whole.
UPDATE t SET k = k + 1 ORDER BY id;
SELECT id, k FROM t ORDER BY id;

-- With IGNORE, in ORDER BY's order: rows 1 and 2 collide with the next row
-- (kept, 1062 each), row 3 moves up; then in descending order all three move.
-- (MariaDB 10.11 gives no warnings here; MySQL 8 gives 1062 for each.)
-- differs: MariaDB gives no warning for the rows UPDATE IGNORE skips; MySQL 8 warns 1062
UPDATE IGNORE t SET k = k + 1 ORDER BY id;
-- differs: MariaDB words some messages differently, and refuses DELAYED (1616)
SHOW WARNINGS;
UPDATE IGNORE t SET k = k + 1 ORDER BY id DESC;
SELECT id, k FROM t ORDER BY id;

-- ORDER BY ... LIMIT picks the rows in ORDER BY's order.
UPDATE t SET s = 'top' ORDER BY k DESC LIMIT 2;
SELECT id, s FROM t ORDER BY id;
DELETE FROM t ORDER BY s, id DESC LIMIT 1;
SELECT id FROM t ORDER BY id;

-- Conversion errors: strict mode fails the statement, IGNORE keeps the
-- adjusted value with the warning.
UPDATE t SET s = 'toolong' WHERE id = 1;
UPDATE IGNORE t SET s = 'toolong' WHERE id = 1;
-- differs: MariaDB words some messages differently, and refuses DELAYED (1616)
SHOW WARNINGS;
UPDATE t SET k = NULL WHERE id = 1;
UPDATE IGNORE t SET k = NULL WHERE id = 1;
-- differs: MariaDB words some messages differently, and refuses DELAYED (1616)
SHOW WARNINGS;
SELECT id, k, s FROM t ORDER BY id;

-- ---- INSERT IGNORE ------------------------------------------------------------------
CREATE TABLE n (id INT PRIMARY KEY, v INT);
-- (INSERT INTO n VALUES (1, '') is 1366 in strict mode on both, with SQLSTATE
-- HY000 in MySQL 8 and Canyon, 22007 in MariaDB: tests/sql/66_dml_modifiers.test.)
INSERT IGNORE INTO n VALUES (1, '');
-- differs: MariaDB words some messages differently, and refuses DELAYED (1616)
SHOW WARNINGS;
INSERT IGNORE INTO n VALUES (1, 5), (2, 99999999999);
SELECT id, v FROM n ORDER BY id;

-- A column without a default left out, and NULL for a NOT NULL column: the
-- implicit default with warnings 1364 and 1048 under IGNORE, errors without.
CREATE TABLE nn (id INT PRIMARY KEY, c INT NOT NULL, d VARCHAR(5) NOT NULL);
INSERT IGNORE INTO nn (id, d) VALUES (1, NULL);
-- differs: MariaDB words some messages differently, and refuses DELAYED (1616)
SHOW WARNINGS;
SELECT id, c, d FROM nn;
INSERT INTO nn (id, d) VALUES (2, 'x');
INSERT INTO nn VALUES (2, 1, NULL);

-- ---- DELETE IGNORE --------------------------------------------------------------------
DELETE IGNORE FROM n WHERE id = 2;
DELETE LOW_PRIORITY QUICK IGNORE FROM n;

-- ---- IGNORE with a missing parent -------------------------------------------------------
CREATE TABLE fp (id INT PRIMARY KEY);
CREATE TABLE fc (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES fp (id));
INSERT INTO fp VALUES (1), (2);
INSERT INTO fc VALUES (1, 1), (2, 2);
-- differs: MariaDB counts the skipped row as changed and gives no warning; MySQL 8 warns
UPDATE IGNORE fc SET pid = pid + 1;
SELECT id, pid FROM fc ORDER BY id;
INSERT IGNORE INTO fc VALUES (3, 7), (4, 1);
DROP DATABASE diff_mt;
