//! The replica's statements, which sqlparser does not know: `BINLOG
//! '<base64>'` (mysqlbinlog's row events), `CHANGE REPLICATION SOURCE TO` /
//! `CHANGE MASTER TO`, `START` / `STOP` / `RESET` `REPLICA` (or `SLAVE`).
//! MySQL 8.0.23's SOURCE_ names and the older MASTER_ names are both read.

/// One of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplicaStatement {
    /// `BINLOG 'text'`: the base64 text.
    Binlog(String),
    /// CHANGE REPLICATION SOURCE TO: the options in order, names upper case
    /// with `MASTER_` read as `SOURCE_`.
    ChangeSource(Vec<(String, OptionValue)>),
    /// START REPLICA (any thread selection: Canyon's two threads start together).
    Start,
    /// STOP REPLICA.
    Stop,
    /// `RESET REPLICA [ALL]`: `true` with ALL.
    Reset(bool),
}

/// An option's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptionValue {
    /// A quoted string.
    Text(String),
    /// A number.
    Number(u64),
}

#[derive(Debug, PartialEq)]
enum Tok {
    Word(String),
    Text(String),
    Number(u64),
    Comma,
    Eq,
}

fn tokens(s: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            ',' => {
                chars.next();
                out.push(Tok::Comma);
            }
            '=' => {
                chars.next();
                out.push(Tok::Eq);
            }
            '\'' | '"' => {
                chars.next();
                let mut t = String::new();
                loop {
                    match chars.next() {
                        None => return Err("unterminated string".into()),
                        Some('\\') => t.push(chars.next().ok_or("unterminated string")?),
                        Some(x) if x == c => {
                            if chars.peek() == Some(&c) {
                                chars.next();
                                t.push(c);
                            } else {
                                break;
                            }
                        }
                        Some(x) => t.push(x),
                    }
                }
                out.push(Tok::Text(t));
            }
            c if c.is_ascii_digit() => {
                let mut t = String::new();
                while let Some(&d) = chars.peek() {
                    if !d.is_ascii_digit() {
                        break;
                    }
                    t.push(d);
                    chars.next();
                }
                out.push(Tok::Number(t.parse().map_err(|_| format!("near '{t}'"))?));
            }
            c if c.is_alphanumeric() || c == '_' => {
                let mut t = String::new();
                while let Some(&d) = chars.peek() {
                    if !(d.is_alphanumeric() || d == '_') {
                        break;
                    }
                    t.push(d);
                    chars.next();
                }
                out.push(Tok::Word(t.to_ascii_uppercase()));
            }
            other => return Err(format!("near '{other}'")),
        }
    }
    Ok(out)
}

fn is(t: Option<&Tok>, w: &str) -> bool {
    matches!(t, Some(Tok::Word(x)) if x == w)
}

/// The statement `sql` is, if it is one of these; `Some(Err(near))` for one
/// written wrongly (1064).
pub fn parse_replica_statement(sql: &str) -> Option<Result<ReplicaStatement, String>> {
    let t = sql.trim();
    let t = t.strip_suffix(';').unwrap_or(t).trim_end();
    let first = t.split(|c: char| !c.is_alphanumeric()).next()?;
    let first = first.to_ascii_uppercase();
    if !["BINLOG", "CHANGE", "START", "STOP", "RESET"].contains(&first.as_str()) {
        return None;
    }
    let bad = || Some(Err(format!("near '{t}'")));
    let Ok(toks) = tokens(t) else {
        return if first == "BINLOG" { bad() } else { None };
    };
    let word = |i: usize| match toks.get(i) {
        Some(Tok::Word(w)) => w.as_str(),
        _ => "",
    };
    match (first.as_str(), word(1)) {
        ("BINLOG", _) => match toks.as_slice() {
            [_, Tok::Text(b)] => Some(Ok(ReplicaStatement::Binlog(b.clone()))),
            _ => bad(),
        },
        ("CHANGE", "REPLICATION" | "MASTER") => {
            let mut i = if word(1) == "REPLICATION" {
                if word(2) != "SOURCE" {
                    return None;
                }
                3
            } else {
                2
            };
            if word(i) != "TO" {
                return bad();
            }
            i += 1;
            let mut opts = Vec::new();
            loop {
                let Some(Tok::Word(name)) = toks.get(i) else {
                    return bad();
                };
                if name == "FOR" {
                    break;
                }
                if toks.get(i + 1) != Some(&Tok::Eq) {
                    return bad();
                }
                let v = match toks.get(i + 2) {
                    Some(Tok::Text(s)) => OptionValue::Text(s.clone()),
                    Some(Tok::Number(n)) => OptionValue::Number(*n),
                    _ => return bad(),
                };
                let name = match name.strip_prefix("MASTER_") {
                    Some(rest) => format!("SOURCE_{rest}"),
                    None => name.clone(),
                };
                opts.push((name, v));
                i += 3;
                match toks.get(i) {
                    None => break,
                    Some(Tok::Comma) => i += 1,
                    Some(_) if is(toks.get(i), "FOR") => break,
                    Some(_) => return bad(),
                }
            }
            if is(toks.get(i), "FOR") {
                // FOR CHANNEL 'name': only the default channel exists.
                match (word(i + 1), toks.get(i + 2), toks.len()) {
                    ("CHANNEL", Some(Tok::Text(c)), n) if n == i + 3 && c.is_empty() => {}
                    ("CHANNEL", Some(Tok::Text(_)), n) if n == i + 3 => {
                        return Some(Err("FOR CHANNEL: only the default channel ''".into()))
                    }
                    _ => return bad(),
                }
            }
            Some(Ok(ReplicaStatement::ChangeSource(opts)))
        }
        ("START" | "STOP", "REPLICA" | "SLAVE") => {
            // IO_THREAD / SQL_THREAD, alone or together: both run as one.
            let rest_ok = toks[2..].iter().all(|t| {
                matches!(t, Tok::Comma)
                    || matches!(t, Tok::Word(w) if w == "IO_THREAD" || w == "SQL_THREAD")
            });
            if !rest_ok {
                return bad();
            }
            Some(Ok(if first == "START" {
                ReplicaStatement::Start
            } else {
                ReplicaStatement::Stop
            }))
        }
        ("RESET", "REPLICA" | "SLAVE") => match toks.len() {
            2 => Some(Ok(ReplicaStatement::Reset(false))),
            3 if word(2) == "ALL" => Some(Ok(ReplicaStatement::Reset(true))),
            _ => bad(),
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(
            parse_replica_statement("BINLOG '\nAAEC\nAwQ=\n'"),
            Some(Ok(ReplicaStatement::Binlog("\nAAEC\nAwQ=\n".into())))
        );
        assert_eq!(
            parse_replica_statement(
                "change master to master_host='h', MASTER_PORT=3306, master_auto_position = 1"
            ),
            Some(Ok(ReplicaStatement::ChangeSource(vec![
                ("SOURCE_HOST".into(), OptionValue::Text("h".into())),
                ("SOURCE_PORT".into(), OptionValue::Number(3306)),
                ("SOURCE_AUTO_POSITION".into(), OptionValue::Number(1)),
            ])))
        );
        assert_eq!(
            parse_replica_statement("CHANGE REPLICATION SOURCE TO SOURCE_USER='r' FOR CHANNEL ''"),
            Some(Ok(ReplicaStatement::ChangeSource(vec![(
                "SOURCE_USER".into(),
                OptionValue::Text("r".into())
            )])))
        );
        assert_eq!(
            parse_replica_statement("start slave io_thread, sql_thread;"),
            Some(Ok(ReplicaStatement::Start))
        );
        assert_eq!(
            parse_replica_statement("STOP REPLICA"),
            Some(Ok(ReplicaStatement::Stop))
        );
        assert_eq!(
            parse_replica_statement("reset replica all"),
            Some(Ok(ReplicaStatement::Reset(true)))
        );
        // Not these statements: left to the ordinary parser.
        assert_eq!(parse_replica_statement("START TRANSACTION"), None);
        assert_eq!(parse_replica_statement("RESET MASTER"), None);
        assert_eq!(parse_replica_statement("CHANGE x"), None);
        // Written wrongly.
        assert!(matches!(parse_replica_statement("BINLOG 1"), Some(Err(_))));
        assert!(matches!(
            parse_replica_statement("CHANGE MASTER TO MASTER_HOST"),
            Some(Err(_))
        ));
        assert!(matches!(
            parse_replica_statement("CHANGE MASTER TO SOURCE_HOST='h' FOR CHANNEL 'x'"),
            Some(Err(_))
        ));
        assert!(matches!(
            parse_replica_statement("STOP SLAVE now"),
            Some(Err(_))
        ));
    }
}
