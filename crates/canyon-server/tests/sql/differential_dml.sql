-- Differential script (dml): see the header of differential.sql for the format rules.
DROP DATABASE IF EXISTS diff_dml;
CREATE DATABASE diff_dml;
USE diff_dml;
SELECT 1;
DROP DATABASE diff_dml;
