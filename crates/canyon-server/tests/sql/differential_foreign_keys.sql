-- Differential script (FOREIGN KEY constraints): the child side (1452, INSERT
-- IGNORE), the parent side (1451, CASCADE, SET NULL, REPLACE), self-referencing
-- tables, foreign_key_checks = 0 as mysqldump output uses it, DROP FOREIGN KEY,
-- RENAME of a parent, and information_schema. The DDL errors whose numbers
-- differ (MariaDB answers most with 1005) are in
-- crates/canyon-sql/tests/sql/08_foreign_keys.test.
DROP DATABASE IF EXISTS diff_fk;
CREATE DATABASE diff_fk;
USE diff_fk;
CREATE TABLE p (id INT PRIMARY KEY, code VARCHAR(10) COLLATE utf8mb4_general_ci, UNIQUE KEY uc (code));
CREATE TABLE c (id INT PRIMARY KEY, pid INT, CONSTRAINT c_p FOREIGN KEY (pid) REFERENCES p (id));
INSERT INTO p VALUES (1, 'a'), (2, 'b'), (3, 'c');
INSERT INTO c VALUES (10, 1), (11, 1), (12, NULL);
INSERT INTO c VALUES (13, 99);
UPDATE c SET pid = 98 WHERE id = 10;
UPDATE c SET pid = 2 WHERE id = 10;
INSERT INTO c VALUES (14, 2), (15, 97);
SELECT id, pid FROM c ORDER BY id;
INSERT IGNORE INTO c VALUES (16, 96), (17, 3);
SHOW WARNINGS;
INSERT INTO c VALUES (18, 3) ON DUPLICATE KEY UPDATE pid = 1;
INSERT INTO c VALUES (18, 3) ON DUPLICATE KEY UPDATE pid = 95;
SELECT id, pid FROM c ORDER BY id;
DELETE FROM p WHERE id = 1;
UPDATE p SET id = 100 WHERE id = 1;
UPDATE p SET code = 'aa' WHERE id = 1;
DELETE FROM p WHERE id = 4;
REPLACE INTO p VALUES (3, 'a');
REPLACE INTO p VALUES (3, 'c');
SELECT id, code FROM p ORDER BY id;
DELETE FROM c WHERE pid = 1;
DELETE FROM p WHERE id = 1;
SELECT id, code FROM p ORDER BY id;
-- CASCADE and SET NULL, through the primary key and through a unique key
-- under a case-insensitive collation.
CREATE TABLE cc (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE ON UPDATE CASCADE);
CREATE TABLE cn (id INT PRIMARY KEY, pcode VARCHAR(10) COLLATE utf8mb4_general_ci, FOREIGN KEY (pcode) REFERENCES p (code) ON DELETE SET NULL ON UPDATE SET NULL);
INSERT INTO p VALUES (5, 'e'), (6, 'f');
INSERT INTO cc VALUES (1, 5), (2, 5), (3, 6);
INSERT INTO cn VALUES (1, 'E'), (2, 'f'), (3, 'F');
INSERT INTO cn VALUES (4, 'g');
UPDATE p SET id = 50 WHERE id = 5;
SELECT id, pid FROM cc ORDER BY id;
UPDATE p SET code = 'F' WHERE id = 6;
SELECT id, pcode FROM cn ORDER BY id;
UPDATE p SET code = 'ff' WHERE id = 6;
SELECT id, pcode FROM cn ORDER BY id;
DELETE FROM p WHERE id IN (50, 6);
SELECT id, pid FROM cc ORDER BY id;
SELECT id, pcode FROM cn ORDER BY id;
INSERT INTO p VALUES (7, 'g');
INSERT INTO cc VALUES (4, 7);
BEGIN;
DELETE FROM p WHERE id = 7;
SELECT COUNT(*) FROM cc;
ROLLBACK;
SELECT id, pid FROM cc ORDER BY id;
-- Chains: p <- cc (CASCADE) <- gc (NO ACTION).
CREATE TABLE gc (id INT PRIMARY KEY, ccid INT, FOREIGN KEY (ccid) REFERENCES cc (id));
INSERT INTO gc VALUES (1, 4);
DELETE FROM p WHERE id = 7;
SELECT id, pid FROM cc ORDER BY id;
DELETE FROM gc;
DELETE FROM p WHERE id = 7;
SELECT id, pid FROM cc ORDER BY id;
-- Self-referencing tables.
CREATE TABLE tree (id INT PRIMARY KEY, parent INT, FOREIGN KEY (parent) REFERENCES tree (id) ON DELETE CASCADE);
INSERT INTO tree VALUES (1, 1), (2, 1), (3, 2), (4, 3), (5, NULL);
INSERT INTO tree VALUES (6, 60);
DELETE FROM tree WHERE id = 2;
SELECT id, parent FROM tree ORDER BY id;
CREATE TABLE t2 (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES t2 (id) ON UPDATE CASCADE);
INSERT INTO t2 VALUES (1, NULL), (2, 1);
UPDATE t2 SET id = 10 WHERE id = 1;
UPDATE t2 SET id = 20 WHERE id = 2;
SELECT id, pid FROM t2 ORDER BY id;
CREATE TABLE t3 (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES t3 (id));
INSERT INTO t3 VALUES (1, NULL), (2, 1), (3, 2);
DELETE FROM t3 WHERE id = 2;
DELETE FROM t3 WHERE id >= 2 ORDER BY id DESC;
SELECT id, pid FROM t3 ORDER BY id;
-- Composite keys.
CREATE TABLE pk2 (a INT, b INT, v INT, PRIMARY KEY (a, b));
CREATE TABLE ck2 (id INT PRIMARY KEY, a INT, b INT, FOREIGN KEY (a, b) REFERENCES pk2 (a, b) ON DELETE CASCADE);
INSERT INTO pk2 VALUES (1, 1, 0), (1, 2, 0);
INSERT INTO ck2 VALUES (1, 1, 1), (2, 1, 2), (3, 1, NULL);
INSERT INTO ck2 VALUES (4, 2, 1);
INSERT INTO ck2 VALUES (5, NULL, 9);
DELETE FROM pk2 WHERE b = 1;
SELECT id, a, b FROM ck2 ORDER BY id;
-- A parent referenced through the leading column of a composite key.
CREATE TABLE cpre (id INT PRIMARY KEY, a INT, FOREIGN KEY (a) REFERENCES pk2 (a));
INSERT INTO cpre VALUES (1, 1);
INSERT INTO cpre VALUES (2, 2);
DELETE FROM pk2 WHERE a = 1 AND b = 2;
-- information_schema.
SELECT CONSTRAINT_NAME, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, POSITION_IN_UNIQUE_CONSTRAINT, REFERENCED_TABLE_SCHEMA, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = 'diff_fk' AND REFERENCED_TABLE_NAME IS NOT NULL ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION;
SELECT CONSTRAINT_NAME, TABLE_NAME, CONSTRAINT_TYPE FROM information_schema.TABLE_CONSTRAINTS WHERE TABLE_SCHEMA = 'diff_fk' AND CONSTRAINT_TYPE = 'FOREIGN KEY' ORDER BY TABLE_NAME, CONSTRAINT_NAME;
-- differs: a rule not written is NO ACTION in MySQL 8 and Canyon, RESTRICT in MariaDB (the same behaviour in InnoDB).
SELECT CONSTRAINT_NAME, UNIQUE_CONSTRAINT_SCHEMA, MATCH_OPTION, UPDATE_RULE, DELETE_RULE, TABLE_NAME, REFERENCED_TABLE_NAME FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = 'diff_fk' ORDER BY TABLE_NAME, CONSTRAINT_NAME;
-- differs: MariaDB's SHOW INDEX has an Ignored column where MySQL 8 has Visible and Expression; cardinalities are estimates.
SHOW INDEX FROM cn;
-- DROP FOREIGN KEY keeps the index; RENAME of a parent moves its references.
ALTER TABLE c DROP FOREIGN KEY c_p;
INSERT INTO c VALUES (30, 555);
ALTER TABLE c DROP FOREIGN KEY c_p;
RENAME TABLE cc TO cc_renamed;
SELECT REFERENCED_TABLE_NAME, TABLE_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = 'diff_fk' AND CONSTRAINT_NAME = 'gc_ibfk_1';
INSERT INTO gc VALUES (2, 999);
-- foreign_key_checks = 0: no checks, no cascades; what mysqldump relies on.
SET foreign_key_checks = 0;
CREATE TABLE later (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES notyet (id));
INSERT INTO later VALUES (1, 5);
INSERT INTO cn VALUES (9, 'zz');
DELETE FROM p WHERE id = 3;
SET foreign_key_checks = 1;
SELECT id, pid FROM c ORDER BY id;
CREATE TABLE notyet (id INT PRIMARY KEY);
INSERT INTO later VALUES (2, 6);
INSERT INTO notyet VALUES (6);
INSERT INTO later VALUES (2, 6);
DELETE FROM notyet;
SELECT id, pid FROM later ORDER BY id;
DROP TABLE later, notyet;
DROP DATABASE diff_fk;
