-- Differential script (dml): see the header of differential.sql for the format rules.
-- MySQL's write forms that OLTP applications use: INSERT ... ON DUPLICATE KEY
-- UPDATE, REPLACE, INSERT ... SET, UPDATE / DELETE ... ORDER BY ... LIMIT,
-- INSERT ... SELECT and subqueries in UPDATE / DELETE. The
-- affected-row counts, info lines ("Records: 3  Duplicates: 1  Warnings: 0"),
-- warning counts, AUTO_INCREMENT values (gaps included) and LAST_INSERT_ID() are
-- all compared. The same cases, plus MySQL 8's row alias (which MariaDB lacks),
-- are in crates/canyon-sql/tests/sql/21_upsert.test and 22_insert_select.test.
DROP DATABASE IF EXISTS diff_dml;
CREATE DATABASE diff_dml;
USE diff_dml;

-- ---- ON DUPLICATE KEY UPDATE -------------------------------------------------------
CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, u INT, c INT NOT NULL DEFAULT 0, UNIQUE KEY uk (u));
INSERT INTO t (u, c) VALUES (1, 10) ON DUPLICATE KEY UPDATE c = c + 1;
SELECT LAST_INSERT_ID();
INSERT INTO t (u, c) VALUES (1, 20) ON DUPLICATE KEY UPDATE c = c + VALUES(c);
SELECT id, u, c FROM t ORDER BY id;
SELECT LAST_INSERT_ID();
INSERT INTO t (u, c) VALUES (1, 30) ON DUPLICATE KEY UPDATE c = VALUES(c);
INSERT INTO t (u, c) VALUES (2, 5);
SELECT LAST_INSERT_ID();
SELECT id, u, c FROM t ORDER BY id;
INSERT INTO t (id, u, c) VALUES (4, 99, 1) ON DUPLICATE KEY UPDATE c = c * 2;
INSERT INTO t (u, c) VALUES (2, 7) ON DUPLICATE KEY UPDATE c = c + VALUES(c), u = c;
SELECT id, u, c FROM t ORDER BY id;
INSERT INTO t (u, c) VALUES (1, 31), (50, 1), (17, 17), (51, 2) ON DUPLICATE KEY UPDATE c = VALUES(c);
SELECT id, u, c FROM t ORDER BY id;
SELECT LAST_INSERT_ID();
INSERT INTO t (u, c) VALUES (1, 31), (17, 17) ON DUPLICATE KEY UPDATE c = VALUES(c);
INSERT INTO t (u, c) VALUES (50, 0) ON DUPLICATE KEY UPDATE u = 51;
INSERT IGNORE INTO t (u, c) VALUES (50, 0), (60, 6) ON DUPLICATE KEY UPDATE u = 51;
INSERT IGNORE INTO t (u, c) VALUES (50, 0) ON DUPLICATE KEY UPDATE u = 51;
SELECT id, u, c FROM t ORDER BY id;
INSERT INTO t (u, c) VALUES (60, 0) ON DUPLICATE KEY UPDATE id = 100;
INSERT INTO t (u, c) VALUES (61, 0);
SELECT id, u, c FROM t ORDER BY id;
INSERT INTO t (u, c) VALUES (60, 0) ON DUPLICATE KEY UPDATE c = NULL;
INSERT INTO t (u, c) VALUES (60, 0) ON DUPLICATE KEY UPDATE c = VALUES(nosuch);
INSERT INTO t (u, c) VALUES (60, 0) ON DUPLICATE KEY UPDATE nosuch = 1;
INSERT INTO t (u, c) VALUES (60, 3) ON DUPLICATE KEY UPDATE c = IF(VALUES(c) > c, VALUES(c), CASE WHEN VALUES(c) = 3 THEN GREATEST(c, VALUES(c)) + 1 ELSE 0 END);
SELECT id, u, c FROM t WHERE u = 60;
INSERT INTO t (u, c) VALUES (NULL, 1), (NULL, 2) ON DUPLICATE KEY UPDATE c = 0;
SELECT COUNT(*) FROM t WHERE u IS NULL;
INSERT INTO t (id, u, c) VALUES (1, 61, 0) ON DUPLICATE KEY UPDATE c = c + 1;
SELECT id, u, c FROM t WHERE id = 1;
INSERT INTO t (u, c) VALUES (70, 1), (70, 2), (70, 3) ON DUPLICATE KEY UPDATE c = c + VALUES(c);
SELECT id, u, c FROM t WHERE u = 70;
SELECT LAST_INSERT_ID();
INSERT INTO t (u, c) VALUES (17, 0) ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id), c = c + 1;
SELECT LAST_INSERT_ID();
INSERT INTO t (u, c) VALUES (80, 0) ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id), c = c + 1;
SELECT LAST_INSERT_ID();
SELECT id, u, c FROM t WHERE u IN (17, 80) ORDER BY id;
CREATE TABLE seq (id BIGINT UNSIGNED NOT NULL);
INSERT INTO seq VALUES (0);
UPDATE seq SET id = LAST_INSERT_ID(id + 1);
UPDATE seq SET id = LAST_INSERT_ID(id + 1);
SELECT LAST_INSERT_ID();
SELECT id FROM seq;

CREATE TABLE cnt (k VARCHAR(10) PRIMARY KEY, n INT NOT NULL);
INSERT INTO cnt VALUES ('a', 1), ('b', 1), ('a', 1), ('a', 1) ON DUPLICATE KEY UPDATE n = n + VALUES(n);
SELECT k, n FROM cnt ORDER BY k;
INSERT INTO cnt VALUES ('a', 3), ('b', 1) ON DUPLICATE KEY UPDATE n = VALUES(n);
INSERT INTO cnt VALUES ('a', 3) ON DUPLICATE KEY UPDATE k = 'b';
INSERT INTO cnt VALUES ('a', 3) ON DUPLICATE KEY UPDATE k = 'z';
SELECT k, n FROM cnt ORDER BY k;

-- ---- INSERT ... SET ----------------------------------------------------------------
INSERT INTO cnt SET k = 'c', n = 5;
INSERT INTO cnt SET n = 1, k = 'c' ON DUPLICATE KEY UPDATE n = n + VALUES(n);
INSERT INTO cnt SET k = 'd';
INSERT INTO cnt SET k = 'd', k = 'e';
INSERT INTO cnt (k, n, k) VALUES ('d', 1, 'e');
INSERT INTO cnt SET k = 'c', n = 0;
INSERT INTO cnt SET nosuch = 1;
INSERT IGNORE INTO cnt SET k = 'c', n = 0;
SELECT k, n FROM cnt ORDER BY k;
CREATE TABLE s (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20) NOT NULL DEFAULT 'anon', qty INT);
INSERT INTO s SET qty = 3;
INSERT INTO s SET name = DEFAULT, qty = DEFAULT;
INSERT INTO s SET id = 10, name = 'ten';
INSERT INTO s SET name = 'next';
SELECT LAST_INSERT_ID();
SELECT id, name, qty FROM s ORDER BY id;

-- ---- REPLACE -----------------------------------------------------------------------
CREATE TABLE r (id INT PRIMARY KEY, u INT, c INT, UNIQUE KEY ru (u));
REPLACE INTO r VALUES (1, 1, 1);
REPLACE INTO r VALUES (1, 1, 1);
REPLACE INTO r VALUES (1, 1, 2);
REPLACE INTO r VALUES (2, 2, 2), (3, 3, 3);
REPLACE INTO r VALUES (2, 3, 9);
SELECT id, u, c FROM r ORDER BY id;
REPLACE INTO r VALUES (3, 3, 9);
REPLACE INTO r SET id = 4, u = 4;
REPLACE r (id, c) VALUES (5, 5), (5, 6), (4, 7);
SELECT id, u, c FROM r ORDER BY id;
REPLACE INTO r VALUES (6, 1, NULL), (7, 4, NULL);
SELECT id, u, c FROM r ORDER BY id;
CREATE TABLE r2 (id INT AUTO_INCREMENT PRIMARY KEY, c INT);
REPLACE INTO r2 (c) VALUES (1), (2);
SELECT LAST_INSERT_ID();
REPLACE INTO r2 VALUES (1, 1);
REPLACE INTO r2 VALUES (1, 5), (1, 6);
REPLACE INTO r2 (c) VALUES (7);
SELECT LAST_INSERT_ID();
SELECT id, c FROM r2 ORDER BY id;
CREATE TABLE h (u INT, c INT, UNIQUE KEY hu (u));
REPLACE INTO h VALUES (1, 1);
REPLACE INTO h VALUES (1, 1);
REPLACE INTO h VALUES (1, 2);
REPLACE INTO h VALUES (NULL, 3), (NULL, 3);
SELECT u, c FROM h ORDER BY u, c;
CREATE TABLE r3 (id INT AUTO_INCREMENT PRIMARY KEY, u VARCHAR(10) NOT NULL, v INT, UNIQUE KEY r3u (u));
INSERT INTO r3 (u, v) VALUES ('a', 1), ('b', 2);
REPLACE INTO r3 (u, v) VALUES ('a', 10);
SELECT LAST_INSERT_ID();
SELECT id, u, v FROM r3 ORDER BY id;

-- ---- UPDATE / DELETE ... ORDER BY ... LIMIT ------------------------------------------
CREATE TABLE q (id INT PRIMARY KEY, k INT, v VARCHAR(10));
INSERT INTO q VALUES (1, 30, 'a'), (2, 10, 'b'), (3, 20, 'c'), (4, 10, 'd'), (5, NULL, 'e');
UPDATE q SET id = id + 1 ORDER BY id;
UPDATE q SET id = id + 1 ORDER BY id DESC;
SELECT id, k, v FROM q ORDER BY id;
UPDATE q SET v = CONCAT(v, '!') ORDER BY k LIMIT 3;
SELECT id, v FROM q ORDER BY id;
UPDATE q SET v = 'top' WHERE id > 2 ORDER BY k DESC, id DESC LIMIT 1;
SELECT id, v FROM q ORDER BY id;
UPDATE q SET v = 'top' WHERE id > 2 ORDER BY k DESC, id DESC LIMIT 1;
UPDATE q SET k = 0 ORDER BY nosuch LIMIT 1;
UPDATE q SET k = k ORDER BY id LIMIT 2;
DELETE FROM q ORDER BY id DESC LIMIT 2;
DELETE FROM q WHERE k IS NOT NULL ORDER BY k DESC LIMIT 1;
SELECT id, k FROM q ORDER BY id;
DELETE FROM q ORDER BY k LIMIT 0;
UPDATE q SET k = k + 1 ORDER BY id LIMIT 1;
SELECT id, k FROM q ORDER BY id;
INSERT INTO q VALUES (10, 1, 'x'), (11, 2, 'y'), (12, 3, 'z'), (13, 4, 'w');
DELETE FROM q WHERE id >= 10 ORDER BY v LIMIT 2;
SELECT id, k, v FROM q ORDER BY id;
UPDATE q SET k = k * 10 WHERE id BETWEEN 3 AND 12 ORDER BY id DESC LIMIT 2;
SELECT id, k, v FROM q ORDER BY id;
DELETE FROM q ORDER BY id;
SELECT COUNT(*) FROM q;

-- ---- INSERT ... SELECT -------------------------------------------------------------
-- The same cases as crates/canyon-sql/tests/sql/22_insert_select.test, minus the
-- statements MySQL refuses and MariaDB accepts (a subquery reading the table being
-- changed, error 1093 in MySQL; correlated subqueries in UPDATE / DELETE, which
-- Canyon does not support yet).
CREATE TABLE src (id INT PRIMARY KEY, a INT, b VARCHAR(10));
INSERT INTO src VALUES (1, 10, 'x'), (2, 20, 'y'), (3, 30, 'z'), (4, NULL, 'w');
CREATE TABLE dst (id INT AUTO_INCREMENT PRIMARY KEY, a INT NOT NULL DEFAULT 7, b VARCHAR(10), UNIQUE KEY ua (a));
INSERT INTO dst (a, b) SELECT a, b FROM src WHERE a IS NOT NULL ORDER BY id;
SELECT id, a, b FROM dst ORDER BY id;
SELECT LAST_INSERT_ID();
INSERT INTO dst (a) VALUES (1);
SELECT LAST_INSERT_ID();
INSERT INTO dst (a, b) SELECT id + 100, b FROM src ORDER BY id;
SELECT LAST_INSERT_ID();
INSERT INTO dst (a) VALUES (1000);
SELECT LAST_INSERT_ID();
SELECT id, a, b FROM dst ORDER BY id;
INSERT INTO dst (a, b) SELECT a FROM src;
INSERT INTO dst SELECT a, b FROM src;
INSERT INTO dst (a, b) SELECT a, b FROM src WHERE id = 4;
INSERT INTO dst (b) SELECT b FROM src WHERE id = 1;
SELECT a, b FROM dst WHERE a = 7;
INSERT INTO dst (a, b) SELECT a, b FROM src WHERE id > 100;
INSERT INTO dst (a, b) SELECT a, b FROM src WHERE id = 1;
INSERT IGNORE INTO dst (a, b) SELECT a * 2, 'ign' FROM src WHERE a IS NOT NULL ORDER BY id;
SELECT a, b FROM dst WHERE b = 'ign' ORDER BY a;
INSERT INTO dst (a, b) SELECT a, CONCAT(b, '!') FROM src WHERE a IS NOT NULL ORDER BY id ON DUPLICATE KEY UPDATE b = VALUES(b);
SELECT a, b FROM dst WHERE a IN (10, 20, 30) ORDER BY a;
INSERT INTO dst (a, b) SELECT a, CONCAT(b, '!') FROM src WHERE a IS NOT NULL ORDER BY id ON DUPLICATE KEY UPDATE b = VALUES(b);
INSERT INTO dst (a, b) SELECT a, b FROM src WHERE a = 10 ON DUPLICATE KEY UPDATE a = a + 1000;
INSERT INTO dst (a, b) SELECT a, b FROM src WHERE a = 10 ON DUPLICATE KEY UPDATE a = dst.a + 1000, b = CONCAT(dst.b, VALUES(b));
SELECT a, b FROM dst WHERE a > 1000 ORDER BY a;
REPLACE INTO dst (id, a, b) SELECT id, a * 100, b FROM src WHERE id <= 2 ORDER BY id;
SELECT id, a, b FROM dst ORDER BY id;
INSERT INTO src (id, a, b) SELECT id + 10, a, b FROM src;
INSERT INTO src SELECT id + 20, a + 1, CONCAT(b, b) FROM src WHERE id > 10;
SELECT id, a, b FROM src ORDER BY id;
INSERT INTO src SELECT id + 10, a, b FROM src WHERE id < 20;
SELECT COUNT(*) FROM src;
CREATE TABLE agg (b VARCHAR(20) PRIMARY KEY, n INT, s INT);
INSERT INTO agg SELECT b, COUNT(*), SUM(a) FROM src GROUP BY b;
SELECT b, n, s FROM agg ORDER BY b;
INSERT INTO agg (b, n) SELECT CONCAT(s1.b, '-', s2.b), s1.id FROM src s1 JOIN src s2 ON s2.id = s1.id + 10 WHERE s1.id < 3 ORDER BY s1.id LIMIT 1;
SELECT b, n, s FROM agg WHERE s IS NULL ORDER BY b;
INSERT INTO agg SELECT b, 0, 0 FROM src ORDER BY id LIMIT 2 ON DUPLICATE KEY UPDATE n = n + 1;
SELECT b, n FROM agg WHERE b IN ('x', 'y') ORDER BY b;

-- ---- subqueries in UPDATE / DELETE -------------------------------------------------
CREATE TABLE u (id INT PRIMARY KEY, k INT, v INT, KEY uk (k));
INSERT INTO u VALUES (1, 1, 100), (2, 2, 200), (3, 3, 300), (4, NULL, 400), (5, 5, 500);
CREATE TABLE w (k INT, n INT);
INSERT INTO w VALUES (1, 5), (3, 7), (NULL, 9);
UPDATE u SET v = (SELECT MAX(n) FROM w) WHERE id IN (SELECT k FROM w);
SELECT id, k, v FROM u ORDER BY id;
DELETE FROM u WHERE id NOT IN (SELECT k FROM w);
DELETE FROM u WHERE id NOT IN (SELECT k FROM w WHERE k IS NOT NULL) AND id < 5;
SELECT id, k, v FROM u ORDER BY id;
UPDATE u SET v = (SELECT n FROM w);
UPDATE u SET v = (SELECT n FROM w) WHERE id = 99;
UPDATE u SET v = (SELECT n FROM w WHERE k = 99) WHERE id = 1;
UPDATE u SET v = v + (SELECT COUNT(*) FROM w) WHERE EXISTS (SELECT 1 FROM w WHERE n > 8) AND id > 1;
UPDATE u SET v = 0 WHERE NOT EXISTS (SELECT 1 FROM w WHERE n > 8);
UPDATE u SET v = 0 WHERE 1 = 0;
UPDATE u SET v = 0 WHERE id = 1 AND NULL;
SELECT id, k, v FROM u ORDER BY id;
UPDATE u SET k = k * 10 WHERE (id, k) IN (SELECT k, k FROM w);
SELECT id, k FROM u ORDER BY id;
UPDATE u SET v = 7 WHERE k IN (SELECT k * 10 FROM w) OR id = (SELECT MIN(k) FROM w);
SELECT id, k, v FROM u ORDER BY id;
UPDATE u SET v = -1 WHERE id > (SELECT MIN(k) FROM w) ORDER BY id DESC LIMIT 1;
SELECT id, v FROM u ORDER BY id;
UPDATE u SET v = (SELECT m FROM (SELECT MAX(v) AS m FROM u) d) WHERE id = 5;
DELETE FROM u WHERE id IN (SELECT id FROM (SELECT id FROM u WHERE id > 4) d);
SELECT id, k, v FROM u ORDER BY id;
DELETE FROM u WHERE id IN (SELECT k, n FROM w);
BEGIN;
INSERT INTO w VALUES (3, 1);
DELETE FROM u WHERE id IN (SELECT k FROM w WHERE n = 1);
ROLLBACK;
SELECT id FROM u ORDER BY id;
-- Primary-key ranges that are the whole WHERE clause (no re-check), and
-- bounds that do not convert exactly (a scan with the re-check).
UPDATE u SET v = 100 WHERE id = 1.5;
UPDATE u SET v = 101 WHERE id BETWEEN '2' AND 3.0;
UPDATE u SET v = 102 WHERE id IN (NULL, 4, 4.5, '1');
UPDATE u SET v = 103 WHERE id > 18446744073709551616;
SELECT id, v FROM u ORDER BY id;
DELETE FROM u WHERE id < 2.5 AND id >= 2;
DELETE FROM u WHERE id = ' 3';
SELECT id, v FROM u ORDER BY id;

-- ---- UPDATE in place: assignments left to right, old keys ---------------------------
CREATE TABLE upd (id INT PRIMARY KEY, a INT NOT NULL, b INT, s VARCHAR(20), UNIQUE KEY us (s), KEY ua (a));
INSERT INTO upd VALUES (1, 10, 0, 'one'), (2, 20, 0, 'two'), (3, 30, 0, 'three');
UPDATE upd SET a = a + 1, b = a * 2 WHERE id = 1;
UPDATE upd SET a = 5, a = a + 1 WHERE id = 2;
UPDATE upd SET a = a, b = b WHERE id < 3;
SELECT id, a, b, s FROM upd ORDER BY id;
SELECT id FROM upd WHERE a = 20;
UPDATE upd SET s = 'three' WHERE id = 1;
UPDATE upd SET s = 'uno', id = 10 WHERE id = 1;
SELECT id, a, b, s FROM upd ORDER BY id;
SELECT id FROM upd WHERE s = 'one';
INSERT INTO upd VALUES (1, 1, 1, 'one');
UPDATE upd SET id = 1 WHERE id = 10;
UPDATE upd SET s = 'one', s = 'ONE!' WHERE id = 1;
UPDATE upd SET s = 'ONE!' WHERE id = 1;
SELECT id, a, s FROM upd WHERE a IN (1, 6, 11) ORDER BY a;

-- ---- strict mode: a data-change statement's warnings are errors ----------------------
-- A string read as a number warns 1292 unless it is a whole number (leading
-- spaces allowed); in an UPDATE (strict mode, both servers' default) the
-- statement fails instead, as does a division by zero (1365) when
-- ERROR_FOR_DIVISION_BY_ZERO is set — without that flag a division by zero is a
-- silent NULL. INSERT IGNORE and SELECT keep the warnings; with a non-strict
-- sql_mode the DML goes through.
CREATE TABLE st (id INT PRIMARY KEY, s VARCHAR(10), v INT);
INSERT INTO st VALUES (1, 'abc', 0), (2, '5', 0), (3, '7x', 0), (4, ' 8', 0);
SELECT id, s + 0 FROM st ORDER BY id;
SELECT id FROM st WHERE s > 4 ORDER BY id;
UPDATE st SET v = 3 WHERE s > 4;
UPDATE st SET v = 1 WHERE s + 0 > 1;
UPDATE st SET v = 1 WHERE id = 2 AND s + 0 > 1;
UPDATE st SET v = 10 / 0 WHERE id = 2;
INSERT INTO st VALUES (5, 'x', 1 / 0);
INSERT IGNORE INTO st VALUES (6, 'y', 1 / 0);
SELECT id, s, v FROM st ORDER BY id;
SET sql_mode = '';
UPDATE st SET v = 10 / 0 WHERE id = 2;
UPDATE st SET v = 2 WHERE s + 0 > 6;
SET sql_mode = 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION';
UPDATE st SET v = 10 / 0 WHERE id = 2;
SET sql_mode = 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION';
UPDATE st SET v = 10 / 0 WHERE id = 4;
SET sql_mode = 'ERROR_FOR_DIVISION_BY_ZERO';
UPDATE st SET v = 10 / 0 WHERE id = 1;
SELECT id, s, v FROM st ORDER BY id;
SET sql_mode = 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION';

DROP DATABASE diff_dml;
