-- Differential script (metadata): see the header of differential.sql for the format
-- rules. information_schema queries that tools (mariadb-dump, SQLAlchemy, GUIs)
-- send, limited to the columns where MariaDB 10.11 and MySQL 8 agree: MariaDB
-- keeps integer display widths in COLUMN_TYPE (int(11)), quotes COLUMN_DEFAULT,
-- estimates TABLE_ROWS differently and has its own default character set, so
-- those columns are not compared here (crates/canyon-sql/tests/sql/
-- 06_information_schema.test pins Canyon's MySQL 8 values).
DROP DATABASE IF EXISTS diff_meta;
CREATE DATABASE diff_meta;
USE diff_meta;
CREATE TABLE t (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, s VARCHAR(10) NOT NULL, n INT, d DECIMAL(8,2), dt DATETIME, UNIQUE KEY us (s));
CREATE INDEX k_nd ON t (n, d);
CREATE TABLE u (a INT NOT NULL, b CHAR(3) NOT NULL, c INT UNSIGNED, PRIMARY KEY (a, b));
INSERT INTO t (s, n) VALUES ('a', 1), ('b', 2), ('c', 3);

-- ---- SCHEMATA, TABLES -----------------------------------------------------------------
SELECT schema_name FROM information_schema.schemata WHERE schema_name = 'diff_meta';
SELECT table_schema, table_name, table_type, engine, auto_increment FROM information_schema.tables WHERE table_schema = 'diff_meta' ORDER BY table_name;
SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = 'diff_meta' AND TABLE_NAME = 'u';
SELECT table_name FROM information_schema.tables WHERE table_schema = 'diff_meta' AND table_name LIKE 't%';
SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'diff_meta' AND table_name IN ('t', 'u', 'nope');
SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'diff_meta_nope';

-- ---- COLUMNS -----------------------------------------------------------------------
SELECT table_name, column_name, ordinal_position, data_type, is_nullable, column_key FROM information_schema.columns WHERE table_schema = 'diff_meta' ORDER BY table_name, ordinal_position;
SELECT column_name, character_maximum_length, numeric_precision, numeric_scale, datetime_precision FROM information_schema.columns WHERE table_schema = 'diff_meta' AND table_name = 't' ORDER BY ordinal_position;
SELECT column_name, extra FROM information_schema.columns WHERE table_schema = 'diff_meta' AND extra = 'auto_increment';
SELECT column_name FROM information_schema.columns WHERE table_schema = 'diff_meta' AND table_name = 'u' AND column_key = 'PRI' ORDER BY ordinal_position;

-- ---- STATISTICS, KEY_COLUMN_USAGE, TABLE_CONSTRAINTS ---------------------------------
-- (Orders avoid comparing 'PRIMARY' with lower-case names: MariaDB sorts them
-- case-insensitively, Canyon bytewise; collations are issue 5.)
SELECT table_name, index_name, non_unique, seq_in_index, column_name, nullable, index_type FROM information_schema.statistics WHERE table_schema = 'diff_meta' ORDER BY table_name, non_unique, index_name, seq_in_index;
SELECT constraint_name, table_name, column_name, ordinal_position, referenced_table_name FROM information_schema.key_column_usage WHERE table_schema = 'diff_meta' ORDER BY table_name, constraint_name, ordinal_position;
SELECT constraint_name, table_name, constraint_type FROM information_schema.table_constraints WHERE table_schema = 'diff_meta' ORDER BY table_name, constraint_name;
SELECT COUNT(*) FROM information_schema.referential_constraints WHERE constraint_schema = 'diff_meta';
SELECT COUNT(*) FROM information_schema.routines WHERE routine_schema = 'diff_meta';
SELECT COUNT(*) FROM information_schema.views WHERE table_schema = 'diff_meta';
SELECT COUNT(*) FROM information_schema.triggers WHERE trigger_schema = 'diff_meta';

-- ---- the SELECT machinery over information_schema ----------------------------------
SELECT t.table_name, COUNT(*) FROM information_schema.tables t JOIN information_schema.columns c ON c.table_schema = t.table_schema AND c.table_name = t.table_name WHERE t.table_schema = 'diff_meta' GROUP BY t.table_name ORDER BY t.table_name;
SELECT table_name FROM information_schema.tables WHERE table_schema = 'diff_meta' AND table_name IN (SELECT table_name FROM information_schema.columns WHERE table_schema = 'diff_meta' AND column_name = 'c');
SELECT t.s, c.data_type FROM t JOIN information_schema.columns c ON c.column_name = t.s WHERE c.table_schema = 'diff_meta' ORDER BY t.s;
SELECT table_name, (SELECT COUNT(*) FROM information_schema.statistics s WHERE s.table_schema = 'diff_meta' AND s.table_name = t.table_name) AS idx FROM information_schema.tables t WHERE t.table_schema = 'diff_meta' ORDER BY table_name;
USE information_schema;
SELECT COUNT(*) FROM tables WHERE table_schema = 'diff_meta';
SELECT DATABASE();
USE diff_meta;

-- ---- read-only, KILL -----------------------------------------------------------------
CREATE TABLE information_schema.x (a INT);
DELETE FROM information_schema.tables;
DROP DATABASE information_schema;
KILL 987654;
KILL QUERY 987654;
SHOW DATABASES LIKE 'information_schema';

DROP DATABASE diff_meta;
