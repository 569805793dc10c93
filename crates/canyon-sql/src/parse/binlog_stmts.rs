//! The statements that show and manage the binary log, which sqlparser does
//! not know: `SHOW {MASTER | BINARY LOG} STATUS`, `SHOW {BINARY | MASTER}
//! LOGS`, `SHOW {REPLICA | SLAVE} STATUS`, `SHOW BINLOG EVENTS [IN 'file'] [FROM pos] [LIMIT [offset,] n]`,
//! `FLUSH BINARY LOGS`, `PURGE {BINARY | MASTER} LOGS {TO 'file' | BEFORE
//! 'datetime'}`.

/// One of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BinlogStatement {
    /// SHOW MASTER STATUS / SHOW BINARY LOG STATUS.
    MasterStatus,
    /// SHOW BINARY LOGS / SHOW MASTER LOGS.
    Logs,
    /// SHOW REPLICA STATUS (`true`), or SHOW SLAVE STATUS with MySQL's
    /// older column names (`false`).
    ReplicaStatus(bool),
    /// SHOW BINLOG EVENTS.
    Events {
        /// IN 'file' (else the first file).
        file: Option<String>,
        /// FROM pos.
        from: Option<u64>,
        /// LIMIT `[offset,] count`.
        offset: u64,
        /// The count, if limited.
        limit: Option<u64>,
    },
    /// FLUSH BINARY LOGS.
    Flush,
    /// PURGE BINARY LOGS TO 'file'.
    PurgeTo(String),
    /// PURGE BINARY LOGS BEFORE 'datetime' (the text, unparsed).
    PurgeBefore(String),
}

/// Splits into words, keeping a quoted string (without its quotes) as one.
fn words(text: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() || c == ',' {
            if c == ',' {
                out.push(",".to_string());
            }
            chars.next();
            continue;
        }
        if c == '\'' || c == '"' {
            chars.next();
            let mut s = String::new();
            loop {
                match chars.next()? {
                    q if q == c => break,
                    '\\' => s.push(chars.next()?),
                    x => s.push(x),
                }
            }
            out.push(format!("'{s}"));
            continue;
        }
        let mut w = String::new();
        while let Some(&x) = chars.peek() {
            if x.is_whitespace() || x == ',' {
                break;
            }
            w.push(x);
            chars.next();
        }
        out.push(w);
    }
    Some(out)
}

/// The statement `sql` is, if it is one of these; `Some(Err)` for one of
/// them written wrongly (1064).
pub fn parse_binlog_statement(sql: &str) -> Option<Result<BinlogStatement, String>> {
    let t = sql.trim();
    let t = t.strip_suffix(';').unwrap_or(t).trim_end();
    let first = t.split_whitespace().next()?;
    if !["SHOW", "FLUSH", "PURGE"]
        .iter()
        .any(|k| first.eq_ignore_ascii_case(k))
    {
        return None;
    }
    let w = words(t)?;
    let up: Vec<String> = w.iter().map(|x| x.to_ascii_uppercase()).collect();
    let u: Vec<&str> = up.iter().map(String::as_str).collect();
    let quoted = |s: &String| s.strip_prefix('\'').map(str::to_string);
    let bad = || Some(Err(format!("near '{t}'")));
    match u.as_slice() {
        ["SHOW", "MASTER", "STATUS"] | ["SHOW", "BINARY", "LOG", "STATUS"] => {
            Some(Ok(BinlogStatement::MasterStatus))
        }
        ["SHOW", "BINARY" | "MASTER", "LOGS"] => Some(Ok(BinlogStatement::Logs)),
        ["SHOW", "REPLICA", "STATUS"] => Some(Ok(BinlogStatement::ReplicaStatus(true))),
        ["SHOW", "SLAVE", "STATUS"] => Some(Ok(BinlogStatement::ReplicaStatus(false))),
        ["FLUSH", "BINARY", "LOGS"] => Some(Ok(BinlogStatement::Flush)),
        ["PURGE", "BINARY" | "MASTER", "LOGS", how, _] => {
            let Some(arg) = quoted(&w[4]) else {
                return bad();
            };
            match *how {
                "TO" => Some(Ok(BinlogStatement::PurgeTo(arg))),
                "BEFORE" => Some(Ok(BinlogStatement::PurgeBefore(arg))),
                _ => bad(),
            }
        }
        ["PURGE", "BINARY" | "MASTER", ..] => bad(),
        ["SHOW", "BINLOG", "EVENTS", ..] => {
            let mut file = None;
            let mut from = None;
            let mut offset = 0;
            let mut limit = None;
            let mut i = 3;
            let num = |s: &str| s.parse::<u64>().ok();
            while i < u.len() {
                match u[i] {
                    "IN" if file.is_none() => {
                        file = Some(w.get(i + 1).and_then(quoted)?);
                        i += 2;
                    }
                    "FROM" if from.is_none() => {
                        from = Some(num(u.get(i + 1)?)?);
                        i += 2;
                    }
                    "LIMIT" if limit.is_none() => {
                        let a = num(u.get(i + 1)?)?;
                        if u.get(i + 2) == Some(&",") {
                            offset = a;
                            limit = Some(num(u.get(i + 3)?)?);
                            i += 4;
                        } else {
                            limit = Some(a);
                            i += 2;
                        }
                    }
                    _ => return bad(),
                }
            }
            Some(Ok(BinlogStatement::Events {
                file,
                from,
                offset,
                limit,
            }))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let p = |s| parse_binlog_statement(s);
        assert_eq!(
            p("show master status"),
            Some(Ok(BinlogStatement::MasterStatus))
        );
        assert_eq!(
            p("SHOW BINARY LOG STATUS;"),
            Some(Ok(BinlogStatement::MasterStatus))
        );
        assert_eq!(p("SHOW MASTER LOGS"), Some(Ok(BinlogStatement::Logs)));
        assert_eq!(
            p("show slave status"),
            Some(Ok(BinlogStatement::ReplicaStatus(false)))
        );
        assert_eq!(
            p("SHOW REPLICA STATUS;"),
            Some(Ok(BinlogStatement::ReplicaStatus(true)))
        );
        assert_eq!(p("flush binary logs"), Some(Ok(BinlogStatement::Flush)));
        assert_eq!(
            p("PURGE BINARY LOGS TO 'binlog.000003'"),
            Some(Ok(BinlogStatement::PurgeTo("binlog.000003".into())))
        );
        assert_eq!(
            p("SHOW BINLOG EVENTS IN 'b.000001' FROM 4 LIMIT 2, 5"),
            Some(Ok(BinlogStatement::Events {
                file: Some("b.000001".into()),
                from: Some(4),
                offset: 2,
                limit: Some(5)
            }))
        );
        assert!(matches!(p("PURGE BINARY LOGS TO"), Some(Err(_))));
        assert!(matches!(
            p("SHOW BINLOG EVENTS FROM x"),
            None | Some(Err(_))
        ));
        assert_eq!(p("SHOW TABLES"), None);
        assert_eq!(p("FLUSH TABLES"), None);
    }
}
