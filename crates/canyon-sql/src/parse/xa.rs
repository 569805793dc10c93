//! The XA statements, as MySQL 8 writes them (manual, 15.3.8.1 "XA
//! Transaction SQL Statements"); sqlparser knows none of them.
//!
//! ```text
//! XA {START | BEGIN} xid [JOIN | RESUME]
//! XA END xid [SUSPEND [FOR MIGRATE]]
//! XA PREPARE xid
//! XA COMMIT xid [ONE PHASE]
//! XA ROLLBACK xid
//! XA RECOVER [CONVERT XID]
//! xid: gtrid [, bqual [, formatID]]
//! ```
//!
//! gtrid and bqual are strings — `'...'`, `"..."`, `X'hex'`, `0xhex`,
//! `B'bits'`, `0bbits` — of at most 64 bytes each (longer is a syntax error,
//! as MySQL's grammar makes it); formatID is an integer, decimal or `0x`
//! hex as Connector/J and MariaDB Connector/J send it (1 when absent).
//! Strings are taken as bytes in the connection's encoding, as MySQL keeps
//! them. The options Canyon, like MySQL, does not implement (JOIN, SUSPEND)
//! parse and are refused when run (XAER_INVAL, 1398).

use canyon_common::{Error, Result};
use canyon_txn::{Xid, XID_PART_MAX};

/// One XA statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum XaStatement {
    /// XA START / BEGIN; `option` is JOIN or RESUME when given.
    Start {
        /// The branch.
        xid: Xid,
        /// `Some("JOIN")` or `Some("RESUME")`.
        option: Option<&'static str>,
    },
    /// XA END; `suspend` for SUSPEND [FOR MIGRATE].
    End {
        /// The branch.
        xid: Xid,
        /// SUSPEND was given.
        suspend: bool,
    },
    /// XA PREPARE.
    Prepare(Xid),
    /// XA COMMIT [ONE PHASE].
    Commit {
        /// The branch.
        xid: Xid,
        /// ONE PHASE.
        one_phase: bool,
    },
    /// XA ROLLBACK.
    Rollback(Xid),
    /// XA RECOVER [CONVERT XID].
    Recover {
        /// CONVERT XID: the data column in hex.
        convert_xid: bool,
    },
}

/// Parses `text` (one statement, trimmed) when it starts with the word XA;
/// `None` otherwise, a 1064 when it is an XA statement written wrongly.
pub fn parse_xa(text: &str) -> Option<Result<XaStatement>> {
    let mut lx = Lexer {
        s: text.as_bytes(),
        at: 0,
    };
    match lx.next() {
        Ok(Some(Tok::Word(w))) if w.eq_ignore_ascii_case("XA") => {}
        _ => return None,
    }
    Some(statement(&mut lx).map_err(|at| {
        Error::Syntax(
            text.get(at..)
                .unwrap_or_default()
                .chars()
                .take(80)
                .collect(),
        )
    }))
}

#[derive(Debug, PartialEq)]
enum Tok {
    Word(String),
    /// A string literal's bytes.
    Str(Vec<u8>),
    /// A `0x` literal's bytes: a string as gtrid or bqual, a number as
    /// formatID (MySQL's `ulong_num` takes HEX_NUM; JDBC drivers send
    /// `0x1234`).
    HexNum(Vec<u8>),
    Int(i64),
    Comma,
}

/// A byte offset into the text, where a syntax error is.
type At = usize;

struct Lexer<'a> {
    s: &'a [u8],
    at: usize,
}

impl Lexer<'_> {
    fn skip_space(&mut self) {
        loop {
            while self.at < self.s.len() && self.s[self.at].is_ascii_whitespace() {
                self.at += 1;
            }
            let rest = &self.s[self.at..];
            if rest.starts_with(b"/*") {
                match rest.windows(2).position(|w| w == b"*/") {
                    Some(end) => self.at += end + 2,
                    None => self.at = self.s.len(),
                }
            } else if rest.starts_with(b"#") || rest.starts_with(b"-- ") {
                match rest.iter().position(|&c| c == b'\n') {
                    Some(end) => self.at += end + 1,
                    None => self.at = self.s.len(),
                }
            } else {
                return;
            }
        }
    }

    /// The next token (`None` at the end, or at a final `;`).
    fn next(&mut self) -> std::result::Result<Option<Tok>, At> {
        self.skip_space();
        let start = self.at;
        let s = self.s;
        let Some(&c) = s.get(start) else {
            return Ok(None);
        };
        let quoted_after = |i: usize| s.get(i) == Some(&b'\'');
        match c {
            b';' => {
                self.at += 1;
                self.skip_space();
                if self.at == s.len() {
                    Ok(None)
                } else {
                    Err(start)
                }
            }
            b',' => {
                self.at += 1;
                Ok(Some(Tok::Comma))
            }
            b'\'' | b'"' => self.quoted(c).map(|b| Some(Tok::Str(b))),
            b'x' | b'X' if quoted_after(start + 1) => {
                self.at += 1;
                let digits = self.quoted(b'\'')?;
                hex(&digits).map(|b| Some(Tok::Str(b))).ok_or(start)
            }
            b'b' | b'B' if quoted_after(start + 1) => {
                self.at += 1;
                let digits = self.quoted(b'\'')?;
                bits(&digits).map(|b| Some(Tok::Str(b))).ok_or(start)
            }
            b'0' if matches!(s.get(start + 1), Some(b'x' | b'b')) => {
                let end = self.word_end(start + 2);
                let digits = &s[start + 2..end];
                self.at = end;
                let v = if s[start + 1] == b'x' {
                    hex(digits)
                } else {
                    bits(digits)
                };
                let hex_num = s[start + 1] == b'x';
                v.filter(|_| !digits.is_empty())
                    .map(|b| Some(if hex_num { Tok::HexNum(b) } else { Tok::Str(b) }))
                    .ok_or(start)
            }
            b'-' | b'+' | b'0'..=b'9' => {
                let mut end = start + 1;
                while end < s.len() && s[end].is_ascii_digit() {
                    end += 1;
                }
                if end < s.len() && (s[end].is_ascii_alphabetic() || s[end] == b'_') {
                    return Err(start);
                }
                self.at = end;
                std::str::from_utf8(&s[start..end])
                    .ok()
                    .and_then(|t| t.parse().ok())
                    .map(|n| Some(Tok::Int(n)))
                    .ok_or(start)
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let end = self.word_end(start);
                self.at = end;
                Ok(Some(Tok::Word(
                    String::from_utf8_lossy(&s[start..end]).into_owned(),
                )))
            }
            _ => Err(start),
        }
    }

    fn word_end(&self, mut i: usize) -> usize {
        while i < self.s.len() && (self.s[i].is_ascii_alphanumeric() || self.s[i] == b'_') {
            i += 1;
        }
        i
    }

    /// A string quoted by `q` starting at `self.at`: MySQL's escapes (a
    /// doubled quote, backslash sequences), as bytes.
    fn quoted(&mut self, q: u8) -> std::result::Result<Vec<u8>, At> {
        let start = self.at;
        let s = self.s;
        let mut i = start + 1;
        let mut out = Vec::new();
        while i < s.len() {
            let c = s[i];
            if c == q {
                if s.get(i + 1) == Some(&q) {
                    out.push(q);
                    i += 2;
                    continue;
                }
                self.at = i + 1;
                return Ok(out);
            }
            if c == b'\\' && i + 1 < s.len() {
                out.push(match s[i + 1] {
                    b'0' => 0,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'b' => 8,
                    b'Z' => 26,
                    other => other,
                });
                i += 2;
                continue;
            }
            out.push(c);
            i += 1;
        }
        Err(start)
    }
}

fn hex(digits: &[u8]) -> Option<Vec<u8>> {
    let d = |c: u8| (c as char).to_digit(16).map(|v| v as u8);
    // An odd count has a leading zero (0xABC is 0x0ABC), as MySQL reads it.
    let padded: Vec<u8> = if digits.len() % 2 == 1 {
        std::iter::once(b'0')
            .chain(digits.iter().copied())
            .collect()
    } else {
        digits.to_vec()
    };
    padded
        .chunks(2)
        .map(|p| Some(d(p[0])? << 4 | d(p[1])?))
        .collect()
}

fn bits(digits: &[u8]) -> Option<Vec<u8>> {
    if digits.iter().any(|c| !matches!(c, b'0' | b'1')) {
        return None;
    }
    let mut out = Vec::new();
    let lead = digits.len() % 8;
    let mut chunks: Vec<&[u8]> = Vec::new();
    if lead > 0 {
        chunks.push(&digits[..lead]);
    }
    chunks.extend(digits[lead..].chunks(8));
    for c in chunks {
        out.push(c.iter().fold(0u8, |a, b| a << 1 | (b - b'0')));
    }
    Some(out)
}

/// The statement after the word XA.
fn statement(lx: &mut Lexer<'_>) -> std::result::Result<XaStatement, At> {
    let at = lx.at;
    let Some(Tok::Word(verb)) = lx.next()? else {
        return Err(at);
    };
    let stmt = match verb.to_ascii_uppercase().as_str() {
        "START" | "BEGIN" => {
            let (xid, next) = xid(lx)?;
            let option = match next {
                None => None,
                Some(Tok::Word(w)) if w.eq_ignore_ascii_case("JOIN") => Some("JOIN"),
                Some(Tok::Word(w)) if w.eq_ignore_ascii_case("RESUME") => Some("RESUME"),
                Some(_) => return Err(at),
            };
            end(lx, option.is_some())?;
            XaStatement::Start { xid, option }
        }
        "END" => {
            let (xid, next) = xid(lx)?;
            let suspend = match next {
                None => false,
                Some(Tok::Word(w)) if w.eq_ignore_ascii_case("SUSPEND") => {
                    let save = lx.at;
                    match lx.next()? {
                        None => {}
                        Some(Tok::Word(f)) if f.eq_ignore_ascii_case("FOR") => {
                            word(lx, "MIGRATE")?;
                            end(lx, true)?;
                        }
                        Some(_) => return Err(save),
                    }
                    true
                }
                Some(_) => return Err(at),
            };
            if !suspend {
                end(lx, false)?;
            }
            XaStatement::End { xid, suspend }
        }
        "PREPARE" => {
            let (xid, next) = xid(lx)?;
            if next.is_some() {
                return Err(at);
            }
            XaStatement::Prepare(xid)
        }
        "COMMIT" => {
            let (xid, next) = xid(lx)?;
            let one_phase = match next {
                None => false,
                Some(Tok::Word(w)) if w.eq_ignore_ascii_case("ONE") => {
                    word(lx, "PHASE")?;
                    end(lx, true)?;
                    true
                }
                Some(_) => return Err(at),
            };
            XaStatement::Commit { xid, one_phase }
        }
        "ROLLBACK" => {
            let (xid, next) = xid(lx)?;
            if next.is_some() {
                return Err(at);
            }
            XaStatement::Rollback(xid)
        }
        "RECOVER" => {
            let save = lx.at;
            let convert_xid = match lx.next()? {
                None => false,
                Some(Tok::Word(w)) if w.eq_ignore_ascii_case("CONVERT") => {
                    word(lx, "XID")?;
                    end(lx, true)?;
                    true
                }
                Some(_) => return Err(save),
            };
            XaStatement::Recover { convert_xid }
        }
        _ => return Err(at),
    };
    Ok(stmt)
}

/// Expects the word `w`.
fn word(lx: &mut Lexer<'_>, w: &str) -> std::result::Result<(), At> {
    let at = lx.at;
    match lx.next()? {
        Some(Tok::Word(x)) if x.eq_ignore_ascii_case(w) => Ok(()),
        _ => Err(at),
    }
}

/// Expects the end of the text (when `expect` is set: after the options).
fn end(lx: &mut Lexer<'_>, expect: bool) -> std::result::Result<(), At> {
    if !expect {
        return Ok(());
    }
    let at = lx.at;
    match lx.next()? {
        None => Ok(()),
        Some(_) => Err(at),
    }
}

/// `gtrid [, bqual [, formatID]]`, and the token after it (`None` at the
/// end of the text).
fn xid(lx: &mut Lexer<'_>) -> std::result::Result<(Xid, Option<Tok>), At> {
    let part = |lx: &mut Lexer<'_>| -> std::result::Result<Vec<u8>, At> {
        let at = lx.at;
        match lx.next()? {
            Some(Tok::Str(b) | Tok::HexNum(b)) if b.len() <= XID_PART_MAX => Ok(b),
            _ => Err(at),
        }
    };
    let gtrid = part(lx)?;
    let mut xid = Xid {
        format_id: 1,
        gtrid,
        bqual: Vec::new(),
    };
    let mut next = lx.next()?;
    if next == Some(Tok::Comma) {
        xid.bqual = part(lx)?;
        next = lx.next()?;
        if next == Some(Tok::Comma) {
            let at = lx.at;
            match lx.next()? {
                Some(Tok::Int(n)) => xid.format_id = n,
                Some(Tok::HexNum(b)) if b.len() <= 8 => {
                    xid.format_id =
                        i64::try_from(b.iter().fold(0u64, |n, &d| n << 8 | u64::from(d)))
                            .map_err(|_| at)?;
                }
                _ => return Err(at),
            }
            next = lx.next()?;
        }
    }
    Ok((xid, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(t: &str) -> XaStatement {
        parse_xa(t).unwrap().unwrap()
    }

    fn x(g: &[u8], b: &[u8], f: i64) -> Xid {
        Xid {
            format_id: f,
            gtrid: g.to_vec(),
            bqual: b.to_vec(),
        }
    }

    #[test]
    fn forms() {
        assert_eq!(
            p("XA START 'a'"),
            XaStatement::Start {
                xid: x(b"a", b"", 1),
                option: None
            }
        );
        assert_eq!(
            p("xa begin 'a','b',7 resume;"),
            XaStatement::Start {
                xid: x(b"a", b"b", 7),
                option: Some("RESUME")
            }
        );
        assert_eq!(
            p("XA END X'0102', 0x0a0B, 3 SUSPEND FOR MIGRATE"),
            XaStatement::End {
                xid: x(&[1, 2], &[10, 11], 3),
                suspend: true
            }
        );
        assert_eq!(p("XA PREPARE \"q\""), XaStatement::Prepare(x(b"q", b"", 1)));
        assert_eq!(
            p("XA COMMIT 'a' ONE PHASE"),
            XaStatement::Commit {
                xid: x(b"a", b"", 1),
                one_phase: true
            }
        );
        assert_eq!(
            p("XA ROLLBACK 'it''s'"),
            XaStatement::Rollback(x(b"it's", b"", 1))
        );
        assert_eq!(
            p("XA RECOVER CONVERT XID"),
            XaStatement::Recover { convert_xid: true }
        );
        assert_eq!(p("XA RECOVER"), XaStatement::Recover { convert_xid: false });
        assert_eq!(
            p("XA START b'1', 0b100000001"),
            XaStatement::Start {
                xid: x(&[1], &[1, 1], 1),
                option: None
            }
        );
        // What Connector/J and MariaDB Connector/J send: every part as 0x
        // hex, formatID included.
        assert_eq!(
            p("XA START 0x6a6176,0x6465626974,0x1234"),
            XaStatement::Start {
                xid: x(b"jav", b"debit", 0x1234),
                option: None
            }
        );
        assert_eq!(
            p("XA COMMIT 0x6A61,0x62,0x1234 "),
            XaStatement::Commit {
                xid: x(b"ja", b"b", 4660),
                one_phase: false
            }
        );
        assert!(parse_xa("SELECT 1").is_none());
        assert!(parse_xa("XAX").is_none());
    }

    #[test]
    fn errors_are_1064() {
        let long = format!("XA START '{}'", "g".repeat(65));
        for bad in [
            "XA",
            "XA START",
            "XA START 'a' JOIN x",
            "XA START 1",
            "XA START 'a',",
            "XA COMMIT 'a' ONE",
            "XA PREPARE 'a' ONE PHASE",
            "XA RECOVER CONVERT",
            "XA FOO 'a'",
            "XA START X'0G'",
            // formatID: a number, never a string or bits, and within a long.
            "XA START 'a', 'b', X'01'",
            "XA START 'a', 'b', 0b1",
            "XA START 'a', 'b', 0x8000000000000000",
            "XA START 'a', 'b', 0x",
            "XA START 'a'; SELECT 1",
            long.as_str(),
        ] {
            assert!(
                matches!(parse_xa(bad), Some(Err(Error::Syntax(_)))),
                "{bad}"
            );
        }
        assert!(parse_xa(&format!("XA START '{}'", "g".repeat(64))).is_some_and(|r| r.is_ok()));
    }
}
