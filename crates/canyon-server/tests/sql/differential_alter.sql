-- Differential script (alter): see the header of differential.sql for the format rules.
-- Online schema change (crates/canyon-sql/src/alter.rs): ALTER TABLE ADD / DROP
-- COLUMN (FIRST / AFTER, defaults read by existing rows, implicit defaults of NOT
-- NULL columns), ADD / DROP INDEX, ADD UNIQUE over duplicates, DROP COLUMN of an
-- indexed column, RENAME, and their errors. The same cases with SHOW output are
-- in crates/canyon-sql/tests/sql/40_alter.test.
DROP DATABASE IF EXISTS diff_alter;
CREATE DATABASE diff_alter;
USE diff_alter;

CREATE TABLE t (id INT PRIMARY KEY, a INT NOT NULL, b VARCHAR(10), KEY ka (a));
INSERT INTO t VALUES (1, 10, 'x'), (2, 20, 'y'), (3, 30, NULL);
ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7;
SELECT * FROM t ORDER BY id;
ALTER TABLE t ADD COLUMN s VARCHAR(5) NOT NULL, ADD COLUMN n INT;
SELECT * FROM t ORDER BY id;
INSERT INTO t (id, a, b, c, s, n) VALUES (4, 40, 'z', 8, 'new', 1);
ALTER TABLE t ADD COLUMN f INT DEFAULT 5 FIRST, ADD COLUMN g CHAR(2) DEFAULT 'gg' AFTER a;
SELECT * FROM t ORDER BY id;
UPDATE t SET g = 'up', f = 0 WHERE id = 2;
SELECT * FROM t ORDER BY id;
ALTER TABLE t DROP COLUMN b;
SELECT * FROM t ORDER BY id;
INSERT INTO t (id, a, s) VALUES (5, 50, 'five');
ALTER TABLE t ADD COLUMN b VARCHAR(10) DEFAULT 'again';
SELECT * FROM t ORDER BY id;
ALTER TABLE t ADD INDEX kc (c);
CREATE UNIQUE INDEX us ON t (s, id);
SELECT id FROM t WHERE c = 8;
SELECT id, s FROM t WHERE s = 'new';
ALTER TABLE t ADD UNIQUE KEY uc (c);
SELECT COUNT(*) FROM t WHERE c = 7;
ALTER TABLE t ADD INDEX ka (c);
ALTER TABLE t ADD UNIQUE KEY ua (a);
INSERT INTO t (id, a, s) VALUES (7, 50, '');
ALTER TABLE t ADD COLUMN a INT;
ALTER TABLE t DROP COLUMN nope;
ALTER TABLE t DROP INDEX nope;
DROP INDEX nope ON t;
ALTER TABLE nope ADD COLUMN x INT;
ALTER TABLE t ADD COLUMN x INT AFTER nope;
DROP INDEX ka ON t;
ALTER TABLE t DROP INDEX kc;
SELECT * FROM t ORDER BY id;

CREATE TABLE m (id INT PRIMARY KEY, x INT, y INT, z INT, KEY kx (x), KEY kxy (x, y));
INSERT INTO m VALUES (1, 1, 1, 1), (2, 2, 2, 2);
ALTER TABLE m DROP COLUMN x;
SELECT * FROM m WHERE y = 2;
ALTER TABLE m DROP INDEX kxy;
ALTER TABLE m DROP INDEX kx;
CREATE TABLE one (x INT, y INT);
ALTER TABLE one DROP COLUMN x, DROP COLUMN y;
DROP TABLE one;

ALTER TABLE m RENAME TO m2;
SELECT * FROM m;
SELECT COUNT(*) FROM m2;
CREATE TABLE other (id INT PRIMARY KEY);
RENAME TABLE m2 TO other;
ALTER TABLE m2 RENAME TO other;
RENAME TABLE nope TO nope2;
RENAME TABLE m2 TO m3;
SELECT * FROM m3 ORDER BY id;
BEGIN;
INSERT INTO m3 VALUES (3, 3, 3);
ALTER TABLE m3 ADD COLUMN w INT DEFAULT 0;
ROLLBACK;
SELECT * FROM m3 ORDER BY id;
DROP DATABASE diff_alter;
