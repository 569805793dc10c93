-- Differential script (query): see the header of differential.sql for the format rules.
DROP DATABASE IF EXISTS diff_query;
CREATE DATABASE diff_query;
USE diff_query;
SELECT 1;
DROP DATABASE diff_query;
