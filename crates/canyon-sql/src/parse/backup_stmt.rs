//! `BACKUP TO 'dir'`: Canyon's hot-backup primitive (no MySQL statement
//! has this form; MariaDB's nearest is `BACKUP STAGE`, which only locks).
//! The server writes a storage checkpoint into the new directory `dir` and
//! returns where it ends (commit timestamp, GTID set, binary-log file and
//! position). `canyon backup` sends it and adds the manifest, checksums and
//! completion marker (docs/backup.md).

/// The directory of a `BACKUP TO` statement, if `sql` is one; `Some(Err)`
/// for one written wrongly (1064).
pub fn parse_backup_statement(sql: &str) -> Option<Result<String, String>> {
    let t = sql.trim();
    let t = t.strip_suffix(';').unwrap_or(t).trim_end();
    let mut it = t.splitn(2, char::is_whitespace);
    if !it.next()?.eq_ignore_ascii_case("BACKUP") {
        return None;
    }
    let rest = it.next().unwrap_or("").trim_start();
    // Only `BACKUP TO`: MariaDB's BACKUP STAGE / BACKUP LOCK go on to the
    // ordinary parser (and its error).
    let word_end = rest
        .find(|c: char| c.is_whitespace() || c == '\'' || c == '"')
        .unwrap_or(rest.len());
    if !rest[..word_end].eq_ignore_ascii_case("TO") {
        return None;
    }
    let bad = || Some(Err(format!("near '{t}'")));
    let arg = rest[word_end..].trim();
    let (Some(q @ ('\'' | '"')), true) = (arg.chars().next(), arg.len() >= 2) else {
        return bad();
    };
    let body = &arg[1..];
    let mut out = String::new();
    let mut chars = body.chars();
    loop {
        match chars.next() {
            None => return bad(),
            Some('\\') => match chars.next() {
                Some(c) => out.push(c),
                None => return bad(),
            },
            Some(c) if c == q => break,
            Some(c) => out.push(c),
        }
    }
    if !chars.as_str().trim().is_empty() {
        return bad();
    }
    Some(Ok(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(
            parse_backup_statement("backup to '/tmp/b1';"),
            Some(Ok("/tmp/b1".into()))
        );
        assert_eq!(
            parse_backup_statement("BACKUP  TO \"/a b\""),
            Some(Ok("/a b".into()))
        );
        assert_eq!(parse_backup_statement("SELECT 1"), None);
        assert_eq!(parse_backup_statement("BACKUPS TO '/x'"), None);
        assert_eq!(parse_backup_statement("BACKUP '/x'"), None);
        assert_eq!(parse_backup_statement("BACKUP STAGE START"), None);
        assert_eq!(parse_backup_statement("BACKUP TOTAL"), None);
        assert!(matches!(parse_backup_statement("BACKUP TO"), Some(Err(_))));
        assert!(matches!(
            parse_backup_statement("BACKUP TO /x"),
            Some(Err(_))
        ));
        assert!(matches!(
            parse_backup_statement("BACKUP TO '/x' extra"),
            Some(Err(_))
        ));
        assert!(matches!(
            parse_backup_statement("BACKUP TO '/x"),
            Some(Err(_))
        ));
    }
}
