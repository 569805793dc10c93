-- Differential script (generated columns): see the header of differential.sql
-- for the format rules. Values computed on INSERT / UPDATE / REPLACE / ON
-- DUPLICATE KEY UPDATE / ALTER TABLE ADD COLUMN, NULL propagation, indexes on
-- generated columns, strict-mode errors, information_schema. MySQL 8 and
-- MariaDB 10.11 differ in the error numbers of the rules (3105 / 1906,
-- 3108 / 1054, ...) and in how SHOW CREATE TABLE prints the expression: those
-- are tested by crates/canyon-sql/tests/sql/generated_columns.test.
DROP DATABASE IF EXISTS diff_gcol;
CREATE DATABASE diff_gcol;
USE diff_gcol;
SET sql_mode = 'STRICT_TRANS_TABLES';
CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, s INT GENERATED ALWAYS AS (a + b) VIRTUAL, p INT AS (a * b) STORED, c VARCHAR(20) AS (CONCAT(a, '-', b)) STORED, KEY ks (s), UNIQUE KEY up (p));
INSERT INTO t (id, a, b) VALUES (1, 1, 2), (2, 3, 4);
INSERT INTO t VALUES (3, 5, 6, DEFAULT, DEFAULT, DEFAULT);
INSERT INTO t SET id = 4, a = 7, b = NULL;
SELECT id, a, b, s, p, c FROM t ORDER BY id;
UPDATE t SET s = DEFAULT, a = 10 WHERE id = 1;
UPDATE t SET b = 20 WHERE id = 2;
SELECT id, s, p, c FROM t ORDER BY id;
SELECT id FROM t WHERE s = 23;
SELECT id FROM t WHERE s = 7;
SELECT id, s FROM t WHERE s BETWEEN 10 AND 30 ORDER BY id;
SELECT id FROM t WHERE p = 60;
SELECT id FROM t WHERE s IS NULL;
INSERT INTO t (id, a, b) VALUES (6, 2, 10);
INSERT INTO t (id, a, b) VALUES (1, 0, 0) ON DUPLICATE KEY UPDATE a = 100;
REPLACE INTO t (id, a, b) VALUES (3, 2, 2);
SELECT id, a, b, s, p, c FROM t ORDER BY id;
DELETE FROM t WHERE s = 4;
SELECT COUNT(*), SUM(s), SUM(p) FROM t;
SELECT COLUMN_NAME, EXTRA FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'diff_gcol' AND TABLE_NAME = 't' ORDER BY ORDINAL_POSITION;
CREATE TABLE small (a INT, t TINYINT AS (a * 100) STORED, c VARCHAR(3) AS (CONCAT('x', a)) STORED);
INSERT INTO small (a) VALUES (5);
INSERT INTO small (a) VALUES (1);
INSERT INTO small (a) VALUES (NULL);
SELECT a, t, c FROM small ORDER BY a;
CREATE TABLE later (g INT AS (a + 1), a INT);
INSERT INTO later (a) VALUES (1), (NULL);
SELECT g, a FROM later ORDER BY a;
CREATE TABLE t2 LIKE t;
INSERT INTO t2 (id, a, b) VALUES (1, 2, 3);
SELECT s, p, c FROM t2;
-- differs: Canyon's table rewrite reports no row count (MySQL and MariaDB count the rows copied)
ALTER TABLE t ADD COLUMN d INT AS (a - b) STORED;
SELECT id, d FROM t ORDER BY id;
ALTER TABLE t DROP COLUMN d;
SELECT id, a, b, s, p FROM t ORDER BY id;
DROP DATABASE diff_gcol;
