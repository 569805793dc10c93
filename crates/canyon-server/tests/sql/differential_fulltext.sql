-- Differential script (FULLTEXT): FULLTEXT KEY / CREATE FULLTEXT INDEX /
-- ALTER TABLE ADD FULLTEXT, SHOW INDEX, 1191 / 1283, and MATCH ... AGAINST in
-- natural-language and boolean mode, relevance numbers included. Also in
-- crates/canyon-sql/tests/sql/64_fulltext.test.
DROP DATABASE IF EXISTS diff_fulltext;
CREATE DATABASE diff_fulltext;
USE diff_fulltext;
CREATE TABLE a (id INT PRIMARY KEY, title VARCHAR(100), body TEXT, FULLTEXT KEY ft (title, body));
INSERT INTO a VALUES (1,'MySQL Tutorial','DBMS stands for DataBase ...'),(2,'How To Use MySQL Well','After you went through a ...'),(3,'Optimizing MySQL','In this tutorial, we show ...'),(4,'1001 MySQL Tricks','1. Never run mysqld as root. 2. ...'),(5,'MySQL vs. YourSQL','In the following database comparison ...'),(6,'MySQL Security','When configured properly, MySQL ...'),(7,'database database','tutorial tut_orial a1b2 ab é été Été'),(8,NULL,NULL);
SELECT Key_name, Seq_in_index, Column_name, Collation, Sub_part, Index_type FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'diff_fulltext' AND TABLE_NAME = 'a' ORDER BY Key_name, Seq_in_index;
SELECT id, MATCH (title, body) AGAINST ('database') FROM a;
SELECT id, MATCH (body, title) AGAINST ('mysql' IN NATURAL LANGUAGE MODE) FROM a;
SELECT id, MATCH (title, body) AGAINST ('database database tutorial') r FROM a WHERE MATCH (title, body) AGAINST ('database database tutorial');
SELECT id FROM a WHERE MATCH (title, body) AGAINST ('mysql database') ORDER BY id;
SELECT id, MATCH (title, body) AGAINST ('ÉTÉ'), MATCH (title, body) AGAINST ('tut_orial a1b2') FROM a WHERE id = 7;
SELECT COUNT(*) FROM a WHERE MATCH (title, body) AGAINST ('ab the is of');
SELECT id, MATCH (title, body) AGAINST ('+database -tutorial' IN BOOLEAN MODE) r FROM a WHERE MATCH (title, body) AGAINST ('+database -tutorial' IN BOOLEAN MODE);
SELECT id, MATCH (title, body) AGAINST ('data*' IN BOOLEAN MODE) r FROM a WHERE MATCH (title, body) AGAINST ('data*' IN BOOLEAN MODE);
SELECT id, MATCH (title, body) AGAINST ('>database <tutorial' IN BOOLEAN MODE) r FROM a WHERE MATCH (title, body) AGAINST ('>database <tutorial' IN BOOLEAN MODE);
SELECT id, MATCH (title, body) AGAINST ('mysql ~database' IN BOOLEAN MODE) r FROM a ORDER BY id;
SELECT id, MATCH (title, body) AGAINST ('"mysql tutorial"' IN BOOLEAN MODE) r FROM a WHERE MATCH (title, body) AGAINST ('"mysql tutorial"' IN BOOLEAN MODE);
SELECT id, MATCH (title, body) AGAINST ('+mysql +(tutorial database)' IN BOOLEAN MODE) r FROM a WHERE MATCH (title, body) AGAINST ('+mysql +(tutorial database)' IN BOOLEAN MODE);
SELECT id, MATCH (title, body) AGAINST ('tutorial +mysql' IN BOOLEAN MODE) r FROM a ORDER BY id;
CREATE TABLE p (id INT PRIMARY KEY, x TEXT, FULLTEXT (x));
INSERT INTO p VALUES (1,'apple applet'),(2,'apple'),(3,'pear'),(4,'pear'),(5,'pear'),(6,'pear'),(7,'pear'),(8,'pear applet applet applet'),(9,'apple apple applet'),(10,'applet applet apple');
SELECT id, MATCH (x) AGAINST ('app*' IN BOOLEAN MODE) FROM p WHERE MATCH (x) AGAINST ('app*' IN BOOLEAN MODE);
SELECT id FROM a WHERE MATCH (title) AGAINST ('mysql');
CREATE TABLE b (id INT, n INT, FULLTEXT (n));
CREATE TABLE b (id INT, n VARBINARY(10), FULLTEXT (n));
CREATE TABLE b (id INT PRIMARY KEY, n VARCHAR(20), m TEXT);
INSERT INTO b VALUES (1, 'apple banana', 'cherry'), (2, 'banana', NULL), (3, NULL, 'apple apple');
CREATE FULLTEXT INDEX fn ON b (n);
ALTER TABLE b ADD FULLTEXT KEY fnm (n, m);
SELECT id, MATCH (n) AGAINST ('apple'), MATCH (n, m) AGAINST ('apple') FROM b ORDER BY id;
DROP INDEX fn ON b;
SELECT id FROM b WHERE MATCH (n) AGAINST ('apple');
DROP DATABASE diff_fulltext;
