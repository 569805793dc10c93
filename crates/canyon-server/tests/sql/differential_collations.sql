-- Differential script (collations): the collations MariaDB 10.11 shares with
-- MySQL 8 and Canyon — utf8mb4_general_ci, utf8mb4_unicode_ci, utf8mb4_bin and
-- binary — in comparisons, keys, sorting, grouping, DISTINCT, MIN/MAX, LIKE and
-- joins. (utf8mb4_0900_ai_ci, MySQL 8's default, is not in MariaDB 10.11; its
-- cases are in crates/canyon-sql/tests/sql/07_collations.test.)
DROP DATABASE IF EXISTS diff_coll;
CREATE DATABASE diff_coll;
USE diff_coll;
CREATE TABLE g (id INT PRIMARY KEY, s VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL, UNIQUE KEY us (s)) DEFAULT CHARSET=utf8mb4;
CREATE TABLE u (id INT PRIMARY KEY, s VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci, KEY ks (s)) DEFAULT CHARSET=utf8mb4;
CREATE TABLE b (id INT PRIMARY KEY, s VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, v VARBINARY(20), KEY ks (s)) DEFAULT CHARSET=utf8mb4;
INSERT INTO g VALUES (1, 'Apple'), (2, 'banana'), (3, 'Éclair'), (4, 'zebra'), (5, 'Ångström'), (6, 'straße');
INSERT INTO g VALUES (7, 'APPLE');
INSERT INTO g VALUES (7, 'apple  ');
INSERT INTO g VALUES (7, 'eclair');
INSERT INTO g VALUES (7, 'strasse'), (8, 'STRAS');
SELECT id, s FROM g WHERE s = 'apple';
SELECT id, s FROM g WHERE s = 'APPLE   ';
SELECT id, s FROM g WHERE s IN ('ECLAIR', 'Zebra') ORDER BY id;
SELECT id, s FROM g WHERE s BETWEEN 'b' AND 'F' ORDER BY s, id;
SELECT id, s FROM g WHERE s > 'S' ORDER BY s, id;
SELECT id, s FROM g WHERE s LIKE 'a%' ORDER BY id;
SELECT id, s FROM g WHERE s LIKE '_CLAIR';
SELECT id, s FROM g ORDER BY s, id;
SELECT id, s FROM g ORDER BY s DESC, id;
SELECT MIN(s), MAX(s) FROM g;
SELECT s = 'apple', s = 'apple' COLLATE utf8mb4_bin FROM g WHERE id = 1;
SELECT id FROM g WHERE s = _binary'apple';
INSERT INTO u VALUES (1, 'Straße'), (2, 'STRASSE'), (3, 'strasse '), (4, 'Résumé'), (5, 'resume'), (6, 'RESUMES'), (7, 'b'), (8, NULL);
SELECT id FROM u WHERE s = 'strasse' ORDER BY id;
SELECT id FROM u WHERE s = 'RESUME' ORDER BY id;
SELECT COUNT(DISTINCT s) FROM u;
SELECT MIN(id), COUNT(*) FROM u GROUP BY s ORDER BY MIN(id);
SELECT DISTINCT LOWER(s) FROM u WHERE s LIKE 'r%' ORDER BY 1;
SELECT id FROM u ORDER BY s, id;
INSERT INTO b VALUES (1, 'a', 'a'), (2, 'A', 'A'), (3, 'a ', 'a '), (4, 'b', 'b'), (5, 'B', 'B');
SELECT id FROM b WHERE s = 'a' ORDER BY id;
SELECT id FROM b WHERE v = 'a' ORDER BY id;
SELECT id FROM b WHERE s = 'A' COLLATE utf8mb4_general_ci ORDER BY id;
SELECT id, s FROM b ORDER BY s, id;
SELECT COUNT(DISTINCT s), COUNT(DISTINCT v) FROM b;
SELECT s, COUNT(*) FROM b GROUP BY s ORDER BY s;
SELECT g.id, u.id FROM g JOIN u ON g.s = u.s ORDER BY g.id, u.id;
SELECT g.id, b.id FROM g JOIN b ON g.s = b.s COLLATE utf8mb4_general_ci ORDER BY g.id, b.id;
SELECT g.id, b.id FROM g JOIN b ON b.s = 'b' AND g.s LIKE CONCAT(b.s, '%') ORDER BY g.id, b.id;
UPDATE g SET s = 'APPLE' WHERE id = 1;
SELECT id, s FROM g WHERE s = 'Apple';
UPDATE g SET s = 'BANANA' WHERE id = 1;
DELETE FROM g WHERE s = 'ZEBRA';
SELECT COUNT(*) FROM g;
SET NAMES utf8mb4 COLLATE utf8mb4_bin;
SELECT 'a' = 'A';
SET NAMES utf8mb4 COLLATE utf8mb4_general_ci;
SELECT 'a' = 'A', 'a' = 'A ';
SET NAMES utf8mb4 COLLATE klingon_ci;
SET NAMES klingon;
CREATE TABLE bad (s VARCHAR(5) CHARACTER SET latin1 COLLATE utf8mb4_bin);
CREATE TABLE bad (s VARCHAR(5) COLLATE klingon_ci);
DROP DATABASE diff_coll;
