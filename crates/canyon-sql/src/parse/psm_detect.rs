//! Which texts are stored-program statements (CREATE / DROP / ALTER
//! PROCEDURE, FUNCTION, TRIGGER, CALL, and their SHOWs): the quick look every
//! COM_QUERY and COM_STMT_PREPARE takes before sqlparser would split a
//! body at its `;`s. Parsing them is [`crate::parse::psm`]'s.

/// Whether `text` starts a statement [`crate::parse::psm`] parses: a quick look at
/// its first words, without tokenizing. Every COM_QUERY asks, so the common
/// case (a first word that is none of CALL, CREATE, DROP, ALTER, SHOW)
/// answers from the text's first bytes, allocating nothing. Executable
/// comments count as their contents (mariadb-dump writes triggers as
/// `/*!50003 CREATE*/ /*!50017 DEFINER=...*/ /*!50003 TRIGGER ... */`).
pub fn is_routine_statement(text: &str) -> bool {
    let t = text.trim_start();
    if !t.starts_with("/*") && !t.starts_with('#') && !t.starts_with("--") {
        let end = t
            .bytes()
            .position(|b| !b.is_ascii_alphabetic())
            .unwrap_or(t.len());
        let first = &t[..end];
        if !["CALL", "CREATE", "DROP", "ALTER", "SHOW"]
            .iter()
            .any(|k| k.eq_ignore_ascii_case(first))
        {
            return false;
        }
    }
    if text.contains("/*!") {
        return routine_words(&crate::parse::parser::expand_executable_comments(text));
    }
    routine_words(text)
}

/// [`is_routine_statement`] on a text without executable comments.
fn routine_words(text: &str) -> bool {
    let words: Vec<String> = first_words(text, 4);
    let w = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
    match w(0) {
        "CALL" => true,
        "CREATE" => {
            let kind = if w(1) == "DEFINER" {
                // CREATE DEFINER = user ...: the word after the user.
                word_after_definer(text).unwrap_or_default()
            } else if w(1) == "AGGREGATE" {
                w(2).to_string()
            } else {
                w(1).to_string()
            };
            matches!(kind.as_str(), "PROCEDURE" | "FUNCTION" | "TRIGGER")
        }
        "DROP" | "ALTER" => matches!(w(1), "PROCEDURE" | "FUNCTION" | "TRIGGER"),
        "SHOW" => {
            (w(1) == "CREATE" && matches!(w(2), "PROCEDURE" | "FUNCTION" | "TRIGGER"))
                || (matches!(w(1), "PROCEDURE" | "FUNCTION") && w(2) == "STATUS")
                || w(1) == "TRIGGERS"
        }
        _ => false,
    }
}

/// In `CREATE DEFINER = user WORD ...`, WORD upper-cased. The user is
/// `'u'@'h'` (any quotes, or none), or CURRENT_USER[()].
fn word_after_definer(text: &str) -> Option<String> {
    let upper = text.to_ascii_uppercase();
    let at = upper.find("DEFINER")? + "DEFINER".len();
    let rest = text[at..].trim_start().strip_prefix('=')?.trim_start();
    let b = rest.as_bytes();
    let mut i = 0;
    // One part of the account: quoted, or a bare word.
    let part = |i: &mut usize| -> Option<()> {
        match b.get(*i)? {
            q @ (b'\'' | b'"' | b'`') => {
                let end = rest[*i + 1..].find(*q as char)?;
                *i += end + 2;
            }
            _ => {
                while b.get(*i).is_some_and(|c| {
                    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.' | b'%' | b'-')
                }) {
                    *i += 1;
                }
            }
        }
        Some(())
    };
    part(&mut i)?;
    if b.get(i) == Some(&b'@') {
        i += 1;
        part(&mut i)?;
    } else if rest[..i].eq_ignore_ascii_case("CURRENT_USER") && rest[i..].starts_with("()") {
        i += 2;
    }
    first_words(&rest[i..], 1).pop()
}

/// The first `n` words of `text`, upper-cased, skipping comments.
fn first_words(text: &str, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while out.len() < n {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("/*") {
            if let Some(r) = r.strip_prefix('!') {
                // An executable comment: its words count.
                rest = r.trim_start_matches(|c: char| c.is_ascii_digit());
                continue;
            }
            rest = r.find("*/").map_or("", |i| &r[i + 2..]);
            continue;
        }
        if rest.starts_with("--") || rest.starts_with('#') {
            rest = rest.find('\n').map_or("", |i| &rest[i..]);
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        out.push(rest[..end].to_ascii_uppercase());
        rest = &rest[end..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routine_statements_are_recognised_by_their_first_words() {
        for yes in [
            "CALL p()",
            "call p",
            "CREATE PROCEDURE p() SELECT 1",
            "/* c */ CREATE FUNCTION f() RETURNS INT RETURN 1",
            "CREATE DEFINER=`root`@`localhost` PROCEDURE p() SELECT 1",
            "CREATE DEFINER = 'a b'@'%' TRIGGER t BEFORE INSERT ON x FOR EACH ROW SET @a = 1",
            "CREATE DEFINER=CURRENT_USER() FUNCTION f() RETURNS INT RETURN 1",
            "CREATE DEFINER=root@localhost FUNCTION f() RETURNS INT RETURN 1",
            "/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 TRIGGER t BEFORE INSERT ON x FOR EACH ROW SET NEW.a = 1 */",
            "  \n call p",
            "DROP PROCEDURE IF EXISTS p",
            "ALTER FUNCTION f COMMENT 'x'",
            "SHOW CREATE TRIGGER t",
            "SHOW FUNCTION STATUS",
            "SHOW TRIGGERS",
        ] {
            assert!(is_routine_statement(yes), "{yes}");
        }
        for no in [
            "CREATE TABLE procedure_log (a INT)",
            "CREATE DEFINER=`root`@`%` VIEW v AS SELECT 'PROCEDURE' AS p",
            "SELECT 'CALL p()'",
            "SELECT 1",
            "/*!40101 SET NAMES utf8mb4 */",
            "CALLS",
            "SHOW CREATE TABLE t",
            "DROP TABLE t",
        ] {
            assert!(!is_routine_statement(no), "{no}");
        }
    }
}
