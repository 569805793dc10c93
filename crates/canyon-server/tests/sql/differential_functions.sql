-- Differential script (functions): see the header of differential.sql for the format rules.
DROP DATABASE IF EXISTS diff_functions;
CREATE DATABASE diff_functions;
USE diff_functions;
SELECT 1;
DROP DATABASE diff_functions;
