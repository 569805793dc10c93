//! The text of COM_QUERY as a Rust string.
//!
//! Canyon's SQL parser reads UTF-8 text, and almost every statement is UTF-8.
//! The exception is binary data that drivers interpolate into the statement
//! themselves: go-sql-driver/mysql with `interpolateParams=true`, PyMySQL,
//! MySQL Connector/J with client-side prepared statements and MariaDB
//! Connector/J send a `[]byte` / `bytes` / `byte[]` parameter as
//! `_binary'…'` with the raw bytes inside, only quotes, backslashes and NUL
//! escaped (MySQL reference manual, 11.1.1 "String Literals" and 12.3.8
//! "Character Set Introducers"); mariadb-dump and mysqldump write BLOB and
//! VARBINARY values the same way without the introducer (unless --hex-blob), as
//! does mysql-connector-python for `bytes`. Such a literal — `_binary` or plain,
//! whose contents are not UTF-8 — is rewritten here into the hex literal of the
//! same bytes, `X'…'`, which MySQL defines to be the same binary string. Raw
//! bytes outside string literals are error 1300.
//!
//! # Other client character sets
//! A session whose `character_set_client` is not UTF-8 (`SET NAMES latin1`,
//! `mariadb --default-character-set=cp1251`) sends its statements in that
//! character set: [`decode_query_in`] converts the whole text to UTF-8 before
//! it is parsed (`canyon_sql::Charset::decode`). Hex literals (`X'E9'`,
//! `0xE9`) and introducers (`_latin1'…'`) are ASCII and so keep their
//! meaning; a `_binary '…'` literal, whose bytes are bytes and not
//! characters, is first rewritten to the hex literal of its bytes so that the
//! conversion cannot change them (as MySQL, which never converts a `_binary`
//! literal). A `_utf8'…'` (`_utf8mb3`, `_utf8mb4`) literal's bytes are
//! UTF-8 whatever the client's set (MySQL reads a literal's bytes in its
//! introducer's set), so it too is kept from the conversion: rewritten to
//! `_utf8 X'…'`, the same UTF-8 string. A plain literal of raw bytes (a
//! dump of a BLOB without --hex-blob, or a driver's `[]byte` without the
//! introducer) is text in the client's character set, converted like the
//! rest — in a latin1 session its byte 0xE9 becomes 'é' (stored as C3 A9), exactly what MySQL stores in a
//! latin1 column, but not the byte 0xE9 a BLOB column would keep in MySQL.
//! In sjis, gbk and big5 a backslash or quote byte may be the second byte of
//! a character, so the raw text cannot be scanned for literals before it is
//! decoded: there `_binary` and `_utf8` literals with bytes above 0x7F are
//! converted like text (use hex literals).
//!
//! Not handled: NO_BACKSLASH_ESCAPES.

use canyon_common::Error;
use canyon_sql::Charset;
use std::borrow::Cow;

/// The statement text of a COM_QUERY body: the body itself when it is UTF-8,
/// else with its `_binary` string literals turned into hex literals; error 1300
/// when other bytes are not UTF-8.
pub fn decode_query(body: &[u8]) -> Result<Cow<'_, str>, Error> {
    if let Ok(s) = std::str::from_utf8(body) {
        return Ok(Cow::Borrowed(s));
    }
    let rewritten = rewrite_binary_literals(body, false);
    String::from_utf8(rewritten).map(Cow::Owned).map_err(|_| {
        Error::InvalidCharacterString(String::from_utf8_lossy(body).chars().take(64).collect())
    })
}

/// The text of a COM_QUERY (or COM_STMT_PREPARE) body sent in the client's
/// character set `cs`, as UTF-8: [`decode_query`] for the UTF-8 sets and
/// binary (no conversion), else the text converted, its `_binary` literals
/// kept as their bytes (see the module documentation). Borrowed when the
/// text is ASCII.
pub fn decode_query_in(body: &[u8], cs: Charset) -> Result<Cow<'_, str>, Error> {
    if cs.is_passthrough() || body.is_ascii() {
        return decode_query(body);
    }
    if !cs.has_ascii_trail_bytes() && (find_ci(body, b"_binary") || find_ci(body, b"_utf8")) {
        let rewritten = rewrite_binary_literals(body, true);
        return Ok(Cow::Owned(cs.decode(&rewritten).into_owned()));
    }
    Ok(cs.decode(body))
}

/// Whether `needle` (ASCII) occurs in `hay`, ignoring ASCII case.
fn find_ci(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle))
}

/// Copies `sql`, replacing each `_binary '…'` / `_binary "…"` literal whose
/// contents are not UTF-8 by `X'…'`. Comments, identifiers in backticks and other
/// literals are copied unchanged (a `_binary` inside them is not an introducer).
/// `legacy`: the text is in a non-UTF-8 client character set that will be
/// converted next: every `_binary` literal with a byte above 0x7F is
/// rewritten, and plain literals are left to the conversion.
fn rewrite_binary_literals(sql: &[u8], legacy: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(sql.len() * 2);
    let mut i = 0;
    while i < sql.len() {
        let b = sql[i];
        match b {
            b'\'' | b'"' | b'`' => {
                let end = literal_end(sql, i);
                let raw = &sql[i..end];
                if b != b'`'
                    && !legacy
                    && std::str::from_utf8(raw).is_err()
                    && end > i + 1
                    && sql[end - 1] == b
                {
                    // A plain string literal with raw bytes: what mariadb-dump
                    // and mysqldump write for BLOB / VARBINARY values without
                    // --hex-blob. The same bytes, as a hex literal.
                    push_hex_literal(&mut out, &unescape(&raw[1..raw.len() - 1], b));
                } else {
                    out.extend_from_slice(raw);
                }
                i = end;
            }
            b'#' => {
                let end = line_end(sql, i);
                out.extend_from_slice(&sql[i..end]);
                i = end;
            }
            b'-' if sql.get(i + 1) == Some(&b'-')
                && sql
                    .get(i + 2)
                    .is_none_or(|c| c.is_ascii_whitespace() || c.is_ascii_control()) =>
            {
                let end = line_end(sql, i);
                out.extend_from_slice(&sql[i..end]);
                i = end;
            }
            b'/' if sql.get(i + 1) == Some(&b'*') => {
                let end = find(sql, i + 2, b"*/").map_or(sql.len(), |p| p + 2);
                out.extend_from_slice(&sql[i..end]);
                i = end;
            }
            b'_' if (i == 0 || !is_ident_byte(sql[i - 1])) && introducer_at(sql, i).is_some() => {
                let (len, binary) = introducer_at(sql, i).expect("matched just above");
                let mut q = i + len;
                while q < sql.len() && sql[q].is_ascii_whitespace() {
                    q += 1;
                }
                if q < sql.len() && (sql[q] == b'\'' || sql[q] == b'"') {
                    let end = literal_end(sql, q);
                    let raw = &sql[q..end];
                    let terminated = end > q + 1 && sql[end - 1] == sql[q];
                    if binary {
                        let rewrite = if legacy {
                            !raw.is_ascii()
                        } else {
                            std::str::from_utf8(raw).is_err()
                        };
                        if rewrite && terminated {
                            push_hex_literal(&mut out, &unescape(&raw[1..raw.len() - 1], sql[q]));
                        } else {
                            out.extend_from_slice(&sql[i..end]);
                        }
                    } else {
                        // `_utf8'…'` in a session of another character set:
                        // its bytes are UTF-8 whatever the client's set, so
                        // they must not be converted from it. The hex literal
                        // of the same bytes keeps its introducer, which makes
                        // it a UTF-8 string rather than a binary one.
                        let utf8 = (legacy && terminated && !raw.is_ascii())
                            .then(|| unescape(&raw[1..raw.len() - 1], sql[q]))
                            .filter(|bytes| std::str::from_utf8(bytes).is_ok());
                        match utf8 {
                            Some(bytes) => {
                                out.extend_from_slice(&sql[i..q]);
                                if q == i + len {
                                    // `_utf8X'…'` would be one name.
                                    out.push(b' ');
                                }
                                push_hex_literal(&mut out, &bytes);
                            }
                            None => out.extend_from_slice(&sql[i..end]),
                        }
                    }
                    i = end;
                } else {
                    out.extend_from_slice(&sql[i..q]);
                    i = q;
                }
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// The introducer starting at `sql[i]` whose literal this module may
/// rewrite: its length and whether it is `_binary` (else a name of UTF-8).
fn introducer_at(sql: &[u8], i: usize) -> Option<(usize, bool)> {
    ["_binary", "_utf8mb4", "_utf8mb3", "_utf8"]
        .iter()
        .map(|name| name.as_bytes())
        .find(|name| {
            sql.len() >= i + name.len()
                && sql[i..i + name.len()].eq_ignore_ascii_case(name)
                && sql.get(i + name.len()).is_none_or(|c| !is_ident_byte(*c))
        })
        .map(|name| (name.len(), name == b"_binary"))
}

/// Appends `X'…'` for `bytes`.
fn push_hex_literal(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(b"X'");
    for byte in bytes {
        out.extend_from_slice(format!("{byte:02X}").as_bytes());
    }
    out.push(b'\'');
}

/// Letters, digits, `_` and `$` (and any non-ASCII byte) continue an identifier.
fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// The index just past the quoted token starting at `start` (its quote byte):
/// past the closing quote, or the end of the text when it is unterminated. A
/// doubled quote is part of the token; so is a backslash-escaped byte, except
/// in backtick identifiers.
fn literal_end(sql: &[u8], start: usize) -> usize {
    let quote = sql[start];
    let mut i = start + 1;
    while i < sql.len() {
        let b = sql[i];
        if b == b'\\' && quote != b'`' {
            i += 2;
        } else if b == quote {
            if sql.get(i + 1) == Some(&quote) {
                i += 2;
            } else {
                return i + 1;
            }
        } else {
            i += 1;
        }
    }
    sql.len()
}

fn line_end(sql: &[u8], start: usize) -> usize {
    sql[start..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(sql.len(), |p| start + p + 1)
}

fn find(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

/// The bytes a quoted literal's contents stand for: MySQL's backslash escapes
/// (\0 \' \" \b \n \r \t \Z \\; `\%` and `\_` keep their backslash; any other
/// `\x` is `x`) and the doubled quote.
fn unescape(body: &[u8], quote: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let b = body[i];
        if b == b'\\' && i + 1 < body.len() {
            let c = body[i + 1];
            match c {
                b'0' => out.push(0),
                b'b' => out.push(8),
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b't' => out.push(b'\t'),
                b'Z' => out.push(0x1a),
                b'%' | b'_' => out.extend_from_slice(&[b'\\', c]),
                _ => out.push(c),
            }
            i += 2;
        } else if b == quote && body.get(i + 1) == Some(&quote) {
            out.push(quote);
            i += 2;
        } else {
            out.push(b);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(sql: &[u8]) -> String {
        decode_query(sql).expect("decodes").into_owned()
    }

    #[test]
    fn utf8_text_is_borrowed_unchanged() {
        let sql = "SELECT _binary'abc', 'héllo 🚀'".as_bytes();
        assert!(matches!(decode_query(sql), Ok(Cow::Borrowed(_))));
    }

    #[test]
    fn binary_literals_become_hex() {
        assert_eq!(
            text(b"INSERT INTO t VALUES (1, _binary'\x00\xff\\0\\'\\\\z')"),
            "INSERT INTO t VALUES (1, X'00FF00275C7A')"
        );
        // MariaDB Connector/J puts a space after the introducer; '' is a quote.
        assert_eq!(text(b"SELECT _BINARY '\xfe''\x80'"), "SELECT X'FE2780'");
        assert_eq!(text(b"SELECT _binary\"\xc3\"\"\""), "SELECT X'C322'");
        // Escapes other than the quoting ones: \n \r \t \b \Z, \% keeps its backslash.
        assert_eq!(
            text(b"SELECT _binary'\xff\\n\\r\\t\\b\\Z\\%'"),
            "SELECT X'FF0A0D09081A5C25'"
        );
        // A UTF-8 _binary literal next to a non-UTF-8 one stays as it is.
        assert_eq!(
            text(b"SELECT _binary'ok', _binary'\xff'"),
            "SELECT _binary'ok', X'FF'"
        );
    }

    #[test]
    fn utf8_literals_escape_the_client_set() {
        let ascii = Charset::from_name("ascii").expect("ascii");
        let sql = "SELECT 'é', _utf8 'র\\'', _UTF8MB4'ü', _utf8'ok'".as_bytes();
        assert_eq!(
            decode_query_in(sql, ascii).expect("decodes"),
            "SELECT '??', _utf8 X'E0A6B027', _UTF8MB4 X'C3BC', _utf8'ok'"
        );
    }

    #[test]
    fn other_bytes_must_be_utf8() {
        // Plain literals with raw bytes (a dump's BLOB values) become hex too.
        assert_eq!(
            text(b"INSERT INTO t VALUES ('\x00\xff\\0'''), (\"\xfe\")"),
            "INSERT INTO t VALUES (X'00FF0027'), (X'FE')"
        );
        for sql in [
            &b"SELECT 'x _binary'\xff'"[..],
            b"SELECT \xff",
            b"SELECT `_binary'\xff'`",
            b"SELECT 1 -- _binary'\xff'",
            b"SELECT 1 /* _binary'\xff' */",
            b"SELECT 1 # _binary'\xff'",
            b"SELECT _binary'\xff",
        ] {
            assert!(
                matches!(decode_query(sql), Err(Error::InvalidCharacterString(_))),
                "{}",
                String::from_utf8_lossy(sql)
            );
        }
    }

    #[test]
    fn survives_random_bytes() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..20_000 {
            let len = (x % 40) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    b"_binary'\"\\`#-/* \xff\xc3"[(x % 15) as usize]
                })
                .collect();
            let _ = decode_query(&bytes);
        }
    }
}
