//! Statement digests: a statement's text with its values removed
//! (`DIGEST_TEXT`) and a hash of that text (`DIGEST`).
//!
//! # The rules (MySQL 8's `sql_digest.cc`, followed token by token)
//! ```text
//!   literals (numbers, strings, X'..', b'..', ?)      -> ?
//!   NULL, except after IS / IS NOT                   -> ?
//!   a sign stays a token (`= -1`)                    -> = - ?
//!   @user_variable                                   -> @?
//!   @@system_variable                                -> @@`name`
//!   ? , ?  , ? ...                                   -> ?, ...
//!   ( ? )                                            -> (?)
//!   ( ?, ... )            (IN lists, VALUES rows)    -> (...)
//!   (?) , (?) ...                                    -> (?) /* , ... */
//!   (...) , (...) ...                                -> (...) /* , ... */
//!   identifiers                                      -> `as written`
//!   keywords                                         -> UPPER CASE
//!   comments, whitespace                             -> one space between tokens
//! ```
//! The reductions run on the token stack as tokens arrive (as MySQL's
//! `digest_add_token` does), so a list of any length costs one pass and the
//! stack never holds more than the reduced statement.
//!
//! # What differs from MySQL
//! MySQL hashes its internal token stream (token numbers and identifier
//! bytes) with SHA-256; Canyon has no such token numbering, so it hashes the
//! digest text with SHA-256. The hash has MySQL's form (64 hex digits) and the
//! same grouping property (same text, same digest) but not MySQL's values: a
//! digest copied from a MySQL server will not match. MySQL decides "keyword
//! or identifier" with its grammar's symbol table; [`KEYWORDS`] holds the
//! words of that table that statements commonly use, so a rarer keyword used
//! as a name shows as an identifier (`` `word` ``), where MySQL shows WORD.
//!
//! # Cost
//! One pass over the text's bytes, no allocation per token but the output
//! string, then SHA-256 over the (usually short) digest text: about a
//! microsecond for a sysbench statement. The per-thread cache in
//! `super::stats` makes a text seen before (a prepared statement, a repeated
//! query) cost a hash-map probe instead.

use sha2::{Digest as _, Sha256};

/// `max_digest_length`'s default: the digest text is cut at this many bytes,
/// followed by "..." (MySQL counts its token bytes; Canyon the text's).
pub const MAX_DIGEST_LENGTH: usize = 1024;

/// A statement's digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    /// The normalised text (`DIGEST_TEXT`).
    pub text: String,
    /// SHA-256 of `text`.
    pub hash: [u8; 32],
}

impl Digest {
    /// The hash as `DIGEST` shows it: 64 lower-case hex digits.
    pub fn hex(&self) -> String {
        hex(&self.hash)
    }
}

/// 64 lower-case hex digits.
pub fn hex(hash: &[u8; 32]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(64);
    for b in hash {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The keywords of MySQL 8's symbol table that statements commonly use
/// (sorted, for the binary search). A word not here is an identifier.
#[rustfmt::skip]
pub const KEYWORDS: &[&str] = &[
    "ACCESSIBLE", "ACTION", "ADD", "ADDDATE", "AFTER", "AGAINST", "ALGORITHM", "ALL", "ALTER",
    "ANALYZE", "AND", "ANY", "AS", "ASC", "ASCII", "AUTO_INCREMENT", "AVG", "BEFORE", "BEGIN",
    "BETWEEN", "BIGINT", "BINARY", "BINLOG", "BIT", "BIT_AND", "BIT_OR", "BIT_XOR", "BLOB",
    "BOOL", "BOOLEAN", "BOTH", "BTREE", "BY", "CALL", "CASCADE", "CASE", "CAST", "CHANGE",
    "CHAR", "CHARACTER", "CHARSET", "CHECK", "CHECKSUM", "CLOSE", "COLLATE", "COLLATION",
    "COLUMN", "COLUMNS", "COMMENT", "COMMIT", "COMMITTED", "COMPRESSED", "CONDITION",
    "CONSISTENT", "CONSTRAINT", "CONTINUE", "CONVERT", "COUNT", "CREATE", "CROSS", "CUBE",
    "CURDATE", "CURRENT", "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "CURRENT_USER",
    "CURSOR", "CURTIME", "DATA", "DATABASE", "DATABASES", "DATE", "DATETIME", "DATE_ADD",
    "DATE_SUB", "DAY", "DAY_HOUR", "DAY_MINUTE", "DAY_SECOND", "DEALLOCATE", "DEC", "DECIMAL",
    "DECLARE", "DEFAULT", "DEFINER", "DELAYED", "DELETE", "DESC", "DESCRIBE", "DETERMINISTIC",
    "DISABLE", "DISTINCT", "DISTINCTROW", "DIV", "DO", "DOUBLE", "DROP", "DUAL", "DUPLICATE",
    "DYNAMIC", "EACH", "ELSE", "ELSEIF", "ENABLE", "ENCLOSED", "END", "ENGINE", "ENGINES",
    "ENUM", "ERRORS", "ESCAPE", "ESCAPED", "EVENT", "EVENTS", "EXCEPT", "EXECUTE", "EXISTS",
    "EXIT", "EXPLAIN", "EXTENDED", "EXTRACT", "FALSE", "FETCH", "FIELDS", "FIRST", "FIXED",
    "FLOAT", "FLUSH", "FOLLOWING", "FOR", "FORCE", "FOREIGN", "FORMAT", "FOUND", "FROM", "FULL",
    "FULLTEXT", "FUNCTION", "GLOBAL", "GRANT", "GRANTS", "GROUP", "GROUP_CONCAT", "HANDLER",
    "HASH", "HAVING", "HELP", "HIGH_PRIORITY", "HOSTS", "HOUR", "HOUR_MINUTE", "HOUR_SECOND",
    "IDENTIFIED", "IF", "IGNORE", "IN", "INDEX", "INDEXES", "INFILE", "INNER", "INOUT",
    "INSERT", "INT", "INTEGER", "INTERSECT", "INTERVAL", "INTO", "INVOKER", "IS", "ISOLATION",
    "ITERATE", "JOIN", "JSON", "KEY", "KEYS", "KILL", "LANGUAGE", "LAST", "LATERAL", "LEADING",
    "LEAVE", "LEFT", "LESS", "LEVEL", "LIKE", "LIMIT", "LINES", "LOAD", "LOCAL", "LOCK",
    "LOCKED", "LOGS", "LONGBLOB", "LONGTEXT", "LOOP", "LOW_PRIORITY", "MASTER", "MATCH", "MAX",
    "MAXVALUE", "MEDIUMBLOB", "MEDIUMINT", "MEDIUMTEXT", "MICROSECOND", "MID", "MIN", "MINUTE",
    "MINUTE_SECOND", "MOD", "MODE", "MODIFY", "MONTH", "NAME", "NAMES", "NATIONAL", "NATURAL",
    "NCHAR", "NEXT", "NO", "NONE", "NOT", "NOW", "NOWAIT", "NULL", "NUMERIC", "OF", "OFFSET",
    "ON", "ONLY", "OPEN", "OPTIMIZE", "OPTION", "OPTIONALLY", "OR", "ORDER", "OUT", "OUTER",
    "OUTFILE", "OVER", "PARTITION", "PARTITIONS", "PASSWORD", "PLUGINS", "POSITION",
    "PRECEDING", "PRECISION", "PREPARE", "PRIMARY", "PRIVILEGES", "PROCEDURE", "PROCESS",
    "PROCESSLIST", "PROFILE", "QUARTER", "QUERY", "QUICK", "RANGE", "READ", "REAL", "RECURSIVE",
    "REFERENCES", "REGEXP", "RELEASE", "RELOAD", "RENAME", "REPEAT", "REPEATABLE", "REPLACE",
    "RESET", "RESIGNAL", "RESTRICT", "RETURN", "RETURNS", "REVOKE", "RIGHT", "RLIKE",
    "ROLLBACK", "ROLLUP", "ROUTINE", "ROW", "ROWS", "ROW_FORMAT", "SAVEPOINT", "SCHEMA",
    "SCHEMAS", "SECOND", "SECURITY", "SELECT", "SEPARATOR", "SERIALIZABLE", "SESSION",
    "SESSION_USER", "SET", "SHARE", "SHOW", "SIGNAL", "SIGNED", "SKIP", "SLAVE", "SMALLINT",
    "SNAPSHOT", "SOME", "SPATIAL", "SQL", "SQLEXCEPTION", "SQLSTATE", "SQLWARNING",
    "SQL_BIG_RESULT", "SQL_BUFFER_RESULT", "SQL_CALC_FOUND_ROWS", "SQL_NO_CACHE",
    "SQL_SMALL_RESULT", "START", "STARTING", "STATUS", "STD", "STDDEV", "STDDEV_POP",
    "STDDEV_SAMP", "STOP", "STORAGE", "STRAIGHT_JOIN", "SUBDATE", "SUBSTR", "SUBSTRING", "SUM",
    "SYSDATE", "SYSTEM_USER", "TABLE", "TABLES", "TEMPORARY", "TEMPTABLE", "TERMINATED", "TEXT",
    "THAN", "THEN", "TIME", "TIMESTAMP", "TINYBLOB", "TINYINT", "TINYTEXT", "TO", "TRAILING",
    "TRANSACTION", "TRIGGER", "TRIGGERS", "TRIM", "TRUE", "TRUNCATE", "TYPE", "UNBOUNDED",
    "UNCOMMITTED", "UNDEFINED", "UNION", "UNIQUE", "UNKNOWN", "UNLOCK", "UNSIGNED", "UNTIL",
    "UPDATE", "USAGE", "USE", "USER", "USING", "UTC_DATE", "UTC_TIME", "UTC_TIMESTAMP", "VALUE",
    "VALUES", "VARBINARY", "VARCHAR", "VARIABLES", "VARIANCE", "VARYING", "VAR_POP", "VAR_SAMP",
    "VIEW", "WAIT", "WARNINGS", "WEEK", "WHEN", "WHERE", "WHILE", "WINDOW", "WITH", "WORK",
    "WRITE", "XA", "XOR", "YEAR", "YEAR_MONTH", "ZEROFILL",
];

/// A token of the digest, after reduction.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A keyword, upper-cased.
    Kw(String),
    /// An identifier as written (shown back-quoted).
    Ident(String),
    /// Punctuation or an operator, as written (`(`, `,`, `<=`, ...).
    Op(String),
    /// `?`: one value.
    Value,
    /// `?, ...`: values separated by commas.
    ValueList,
    /// `(?)`.
    RowSingle,
    /// `(...)`.
    RowMulti,
    /// `(?) /* , ... */`.
    RowSingleList,
    /// `(...) /* , ... */`.
    RowMultiList,
}

impl Tok {
    fn is_op(&self, s: &str) -> bool {
        matches!(self, Tok::Op(o) if o == s)
    }

    fn is_kw(&self, s: &str) -> bool {
        matches!(self, Tok::Kw(k) if k == s)
    }

    fn write(&self, out: &mut String) {
        match self {
            Tok::Kw(k) => out.push_str(k),
            Tok::Ident(i) => {
                out.push('`');
                out.push_str(&i.replace('`', "``"));
                out.push('`');
            }
            Tok::Op(o) => out.push_str(o),
            Tok::Value => out.push('?'),
            Tok::ValueList => out.push_str("?, ..."),
            Tok::RowSingle => out.push_str("(?)"),
            Tok::RowMulti => out.push_str("(...)"),
            Tok::RowSingleList => out.push_str("(?) /* , ... */"),
            Tok::RowMultiList => out.push_str("(...) /* , ... */"),
        }
    }
}

/// The reducing token stack (see the module doc).
struct Stack(Vec<Tok>);

impl Stack {
    fn top(&self, back: usize) -> Option<&Tok> {
        self.0.len().checked_sub(back + 1).map(|i| &self.0[i])
    }

    fn push_value(&mut self) {
        // ? , ?  ->  ?, ...
        if self.top(0).is_some_and(|t| t.is_op(","))
            && matches!(self.top(1), Some(Tok::Value | Tok::ValueList))
        {
            self.0.truncate(self.0.len() - 2);
            self.0.push(Tok::ValueList);
            return;
        }
        self.0.push(Tok::Value);
    }

    fn push_close(&mut self) {
        let row = match (self.top(0), self.top(1)) {
            (Some(Tok::Value), Some(o)) if o.is_op("(") => Some(Tok::RowSingle),
            (Some(Tok::ValueList), Some(o)) if o.is_op("(") => Some(Tok::RowMulti),
            _ => None,
        };
        let Some(row) = row else {
            self.0.push(Tok::Op(")".into()));
            return;
        };
        self.0.truncate(self.0.len() - 2);
        // (?) , (?)  ->  (?) /* , ... */  (and the same for (...)).
        if self.top(0).is_some_and(|t| t.is_op(",")) {
            let list = match (&row, self.top(1)) {
                (Tok::RowSingle, Some(Tok::RowSingle | Tok::RowSingleList)) => {
                    Some(Tok::RowSingleList)
                }
                (Tok::RowMulti, Some(Tok::RowMulti | Tok::RowMultiList)) => Some(Tok::RowMultiList),
                _ => None,
            };
            if let Some(list) = list {
                self.0.truncate(self.0.len() - 2);
                self.0.push(list);
                return;
            }
        }
        self.0.push(row);
    }

    fn push_word(&mut self, word: &str) {
        let upper = word.to_ascii_uppercase();
        if upper == "NULL" {
            // IS NULL / IS NOT NULL keep the word; anywhere else NULL is a value.
            let after_is = self.top(0).is_some_and(|t| t.is_kw("IS"))
                || (self.top(0).is_some_and(|t| t.is_kw("NOT"))
                    && self.top(1).is_some_and(|t| t.is_kw("IS")));
            if after_is {
                self.0.push(Tok::Kw(upper));
            } else {
                self.push_value();
            }
            return;
        }
        if KEYWORDS.binary_search(&upper.as_str()).is_ok() {
            self.0.push(Tok::Kw(upper));
        } else {
            self.0.push(Tok::Ident(word.to_string()));
        }
    }
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// The end of a quoted string starting at `i` (the quote), past its closing
/// quote; a backslash escapes, a doubled quote is one quote.
fn skip_quoted(s: &[u8], i: usize) -> usize {
    let q = s[i];
    let mut j = i + 1;
    while j < s.len() {
        if s[j] == b'\\' && q != b'`' {
            j += 2;
            continue;
        }
        if s[j] == q {
            if s.get(j + 1) == Some(&q) {
                j += 2;
                continue;
            }
            return j + 1;
        }
        j += 1;
    }
    s.len()
}

/// The digest of `sql`.
pub fn digest(sql: &str) -> Digest {
    let text = digest_text(sql);
    let hash: [u8; 32] = Sha256::digest(text.as_bytes()).into();
    Digest { text, hash }
}

/// The normalised text of `sql` (`DIGEST_TEXT`).
pub fn digest_text(sql: &str) -> String {
    let s = sql.as_bytes();
    let mut st = Stack(Vec::with_capacity(32));
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        // Whitespace and comments.
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if b == b'#'
            || (b == b'-'
                && s.get(i + 1) == Some(&b'-')
                && s.get(i + 2).is_none_or(|c| c.is_ascii_whitespace()))
        {
            while i < s.len() && s[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if b == b'/' && s.get(i + 1) == Some(&b'*') {
            if s.get(i + 2) == Some(&b'!') {
                // An executable comment: its content is part of the statement.
                i += 3;
                while i < s.len() && s[i].is_ascii_digit() {
                    i += 1;
                }
                continue;
            }
            match sql[i + 2..].find("*/") {
                Some(end) => i += 2 + end + 2,
                None => i = s.len(),
            }
            continue;
        }
        if b == b'*' && s.get(i + 1) == Some(&b'/') {
            // The end of an executable comment.
            i += 2;
            continue;
        }
        // Strings and back-quoted names.
        if b == b'\'' || b == b'"' {
            i = skip_quoted(s, i);
            st.push_value();
            continue;
        }
        if b == b'`' {
            let end = skip_quoted(s, i);
            // Without its closing quote (a statement that will not parse) the
            // name runs to the end.
            let close = if end <= s.len() && s[end - 1] == b'`' && end > i + 1 {
                end - 1
            } else {
                end
            };
            let inner = &sql[i + 1..close];
            st.0.push(Tok::Ident(inner.replace("``", "`")));
            i = end;
            continue;
        }
        // Numbers (and 0x.., 0b..).
        if b.is_ascii_digit() || (b == b'.' && s.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let mut j = i;
            while j < s.len() && (is_word_byte(s[j]) || s[j] == b'.') {
                // An exponent's sign: 1e-5.
                if (s[j] == b'e' || s[j] == b'E')
                    && matches!(s.get(j + 1), Some(b'+' | b'-'))
                    && s[i..j].iter().all(|c| c.is_ascii_digit() || *c == b'.')
                {
                    j += 2;
                    continue;
                }
                j += 1;
            }
            if s[i..j].iter().all(|c| c.is_ascii_digit() || *c == b'.')
                || s[i..j].starts_with(b"0x")
                || s[i..j].starts_with(b"0b")
                || s[i..j]
                    .iter()
                    .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
            {
                st.push_value();
            } else {
                // A name that starts with a digit (`1abc`).
                st.push_word(&sql[i..j]);
            }
            i = j;
            continue;
        }
        // Words: keywords, names, X'..' / B'..' / N'..' / _charset'..'.
        if is_word_byte(b) {
            let mut j = i;
            while j < s.len() && is_word_byte(s[j]) {
                j += 1;
            }
            let word = &sql[i..j];
            if s.get(j) == Some(&b'\'')
                && (matches!(word, "x" | "X" | "b" | "B" | "n" | "N") || word.starts_with('_'))
            {
                i = skip_quoted(s, j);
                st.push_value();
                continue;
            }
            st.push_word(word);
            i = j;
            continue;
        }
        // Variables: @name (a value, as MySQL sees it: `@?`), @@name.
        if b == b'@' {
            let system = s.get(i + 1) == Some(&b'@');
            let mut j = i + 1 + usize::from(system);
            let start = j;
            if matches!(s.get(j), Some(b'\'' | b'"' | b'`')) {
                j = skip_quoted(s, j);
            } else {
                while j < s.len() && is_word_byte(s[j]) {
                    j += 1;
                }
            }
            if system {
                let name = sql[start..j].trim_matches(|c| c == '`' || c == '\'' || c == '"');
                st.0.push(Tok::Op(format!("@@`{name}`")));
            } else {
                st.0.push(Tok::Op("@?".into()));
            }
            i = j;
            continue;
        }
        if b == b'?' {
            st.push_value();
            i += 1;
            continue;
        }
        // Operators: the longest of the multi-byte ones, else one byte.
        let op = [
            "<=>", "->>", "<=", ">=", "<>", "!=", ":=", "||", "&&", "<<", ">>", "->",
        ]
        .into_iter()
        .find(|o| s[i..].starts_with(o.as_bytes()));
        match op {
            Some(o) => {
                st.0.push(Tok::Op(o.to_string()));
                i += o.len();
            }
            None if b == b')' => {
                st.push_close();
                i += 1;
            }
            None if b == b';' => i += 1,
            None => {
                let len = sql[i..].chars().next().map_or(1, char::len_utf8);
                st.0.push(Tok::Op(sql[i..i + len].to_string()));
                i += len;
            }
        }
    }
    let mut out = String::with_capacity(sql.len().min(MAX_DIGEST_LENGTH) + 8);
    for (n, t) in st.0.iter().enumerate() {
        if n > 0 {
            out.push(' ');
        }
        t.write(&mut out);
        if out.len() > MAX_DIGEST_LENGTH {
            let mut cut = MAX_DIGEST_LENGTH;
            while !out.is_char_boundary(cut) {
                cut -= 1;
            }
            out.truncate(cut);
            out.push_str("...");
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_are_sorted() {
        assert!(
            KEYWORDS.windows(2).all(|w| w[0] < w[1]),
            "binary search needs order"
        );
    }

    #[test]
    fn normalises_as_mysql_8() {
        for (sql, want) in [
            ("SELECT * FROM foo", "SELECT * FROM `foo`"),
            ("select NOW()", "SELECT NOW ( )"),
            (
                "SELECT * FROM mytable WHERE cola = 10 AND colb = 20",
                "SELECT * FROM `mytable` WHERE `cola` = ? AND `colb` = ?",
            ),
            (
                "SELECT help_topic_id, name FROM mysql.help_topic",
                "SELECT `help_topic_id` , NAME FROM `mysql` . `help_topic`",
            ),
            (
                "SELECT c FROM t WHERE id IN (1, 2, 3)",
                "SELECT `c` FROM `t` WHERE `id` IN (...)",
            ),
            (
                "SELECT c FROM t WHERE id IN (7)",
                "SELECT `c` FROM `t` WHERE `id` IN (?)",
            ),
            (
                "INSERT INTO t VALUES (1,'a'),(2,'b')",
                "INSERT INTO `t` VALUES (...) /* , ... */",
            ),
            (
                "INSERT INTO t VALUES (1,'a')",
                "INSERT INTO `t` VALUES (...)",
            ),
            (
                "INSERT INTO t (a) VALUES (1),(2)",
                "INSERT INTO `t` ( `a` ) VALUES (?) /* , ... */",
            ),
            ("SELECT 1, 2", "SELECT ?, ..."),
            (
                "SELECT a - 1 FROM t WHERE b = -5",
                "SELECT `a` - ? FROM `t` WHERE `b` = - ?",
            ),
            ("SELECT @x, @@autocommit", "SELECT @? , @@`autocommit`"),
            ("SET @y = 5", "SET @? = ?"),
            (
                "select concat(a,'x'), count(*) from t group by a",
                "SELECT `concat` ( `a` , ? ) , COUNT ( * ) FROM `t` GROUP BY `a`",
            ),
            (
                "select  a\n from t where b is not null and c = null",
                "SELECT `a` FROM `t` WHERE `b` IS NOT NULL AND `c` = ?",
            ),
            (
                "SELECT c FROM sbtest1 WHERE id=?",
                "SELECT `c` FROM `sbtest1` WHERE `id` = ?",
            ),
            (
                "UPDATE t SET k=k+1 WHERE id=42 /* hi */ -- there",
                "UPDATE `t` SET `k` = `k` + ? WHERE `id` = ?",
            ),
            ("SELECT x'ff', 0x1F, 1.5e-3, _utf8mb4'z'", "SELECT ?, ..."),
            ("SELECT `we``ird`", "SELECT `we``ird`"),
            ("SELECT a FROM t LIMIT 10", "SELECT `a` FROM `t` LIMIT ?"),
        ] {
            assert_eq!(digest_text(sql), want, "{sql}");
        }
    }

    #[test]
    fn same_shape_same_hash() {
        let a = digest("SELECT c FROM t WHERE id = 1");
        let b = digest("select c  from t where id=99");
        assert_eq!(a, b);
        assert_eq!(a.hex().len(), 64);
        assert_ne!(a.hash, digest("SELECT c FROM u WHERE id = 1").hash);
    }

    #[test]
    fn any_text_digests_without_panicking() {
        for sql in [
            "SELECT `é",
            "SELECT 'é",
            "`",
            "'",
            "@'é",
            "/*",
            "/*!",
            "x'",
            "é",
            "SELECT 1e",
            "-- é",
            "\u{0}",
        ] {
            let _ = digest(sql);
        }
        assert_eq!(digest_text("SELECT `é"), "SELECT `é`");
    }

    #[test]
    fn long_text_is_cut() {
        let sql = format!("SELECT {} FROM t", vec!["a"; 600].join(", "));
        let t = digest_text(&sql);
        assert!(t.ends_with("..."));
        assert!(t.len() <= MAX_DIGEST_LENGTH + 3);
    }
}
