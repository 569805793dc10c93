//! `CREATE TABLE ... IGNORE | REPLACE [AS] SELECT`: the word sqlparser does
//! not take.
//!
//! MySQL 8.0's grammar (manual 15.1.20.4 "CREATE TABLE ... SELECT"):
//!
//! ```text
//! CREATE [TEMPORARY] TABLE [IF NOT EXISTS] tbl_name
//!     [(create_definition,...)] [table_options] [partition_options]
//!     [IGNORE | REPLACE] [AS] query_expression
//! ```
//!
//! sqlparser parses the statement without the word, so the text is split
//! here — only after sqlparser refused it, so no other statement pays for
//! the scan — and the word travels beside the statement
//! (`Parsed::CreateSelect`): IGNORE turns duplicate-key errors into skipped
//! rows, REPLACE replaces the row already there.

/// For a `CREATE ... TABLE` text with IGNORE or REPLACE before its query:
/// the text without the word, and whether it was REPLACE. The word counts
/// only outside parentheses, quotes and comments, before the query's first
/// word, and followed by SELECT, WITH, TABLE, VALUES, `(` or AS.
pub fn split_duplicates(text: &str) -> Option<(String, bool)> {
    let head: String = text
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_uppercase();
    if !(head.starts_with("CREATE TABLE") || head.starts_with("CREATE TEMPORARY TABLE")) {
        return None;
    }
    let words = top_level_words(text);
    for (i, &(start, end)) in words.iter().enumerate() {
        let w = &text[start..end];
        // The word comes before the query: past its first word, none is it.
        if ["SELECT", "WITH", "VALUES"]
            .iter()
            .any(|k| w.eq_ignore_ascii_case(k))
        {
            return None;
        }
        let replace = w.eq_ignore_ascii_case("REPLACE");
        if !(replace || w.eq_ignore_ascii_case("IGNORE")) {
            continue;
        }
        let rest = text[end..].trim_start();
        let next_word = words.get(i + 1).map(|&(s, e)| &text[s..e]);
        let starts_query = rest.starts_with('(')
            || next_word.is_some_and(|n| {
                ["SELECT", "WITH", "TABLE", "VALUES", "AS"]
                    .iter()
                    .any(|k| n.eq_ignore_ascii_case(k))
                    && rest.len() >= n.len()
                    && rest[..n.len()].eq_ignore_ascii_case(n)
            });
        if starts_query {
            let mut out = String::with_capacity(text.len());
            out.push_str(&text[..start]);
            out.push(' ');
            out.push_str(&text[end..]);
            return Some((out, replace));
        }
    }
    None
}

/// Byte spans of the bare words at parenthesis depth 0, outside quotes
/// ('', "", ``) and comments (`-- `, `#`, `/* */`).
fn top_level_words(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\'' | b'"' | b'`' => {
                i += 1;
                while i < b.len() && b[i] != c {
                    if b[i] == b'\\' && c != b'`' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 2;
            }
            b'(' => {
                depth += 1;
                i += 1;
            }
            b')' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$')
                {
                    i += 1;
                }
                if depth == 0 {
                    out.push((start, i));
                }
            }
            _ => i += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_before_the_query_is_taken_out() {
        let (t, replace) =
            split_duplicates("CREATE TABLE t (a INT PRIMARY KEY) IGNORE SELECT 1 AS a")
                .expect("found");
        assert!(!replace);
        assert_eq!(t, "CREATE TABLE t (a INT PRIMARY KEY)   SELECT 1 AS a");
        let (t, replace) =
            split_duplicates("create temporary table t replace as select * from s").expect("found");
        assert!(replace);
        assert_eq!(t, "create temporary table t   as select * from s");
        assert!(split_duplicates("CREATE TABLE t ENGINE=InnoDB REPLACE (SELECT 1)").is_some());
    }

    #[test]
    fn other_texts_are_left_alone() {
        for sql in [
            "CREATE TABLE t (a INT) SELECT REPLACE('a', 'b', 'c') AS a",
            "CREATE TABLE t (a INT COMMENT 'ignore select') SELECT 1 AS a",
            "CREATE TABLE t (a INT) SELECT 1 AS ignore_me",
            "INSERT IGNORE INTO t SELECT 1",
            "CREATE TABLE `ignore` (a INT)",
        ] {
            assert!(split_duplicates(sql).is_none(), "{sql}");
        }
    }
}
