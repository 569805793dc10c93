//! The string functions: CONCAT, SUBSTRING, TRIM, REPLACE, LPAD, LOCATE,
//! INSERT, FORMAT, ..., and the encodings (HEX, QUOTE, TO_BASE64, MD5, SHA1,
//! SHA2, CRC32). Characters are counted in UTF-8; strings compare bytewise
//! (see the known differences in [`functions`](super::functions)). A family
//! of the functions, in its own file as the others are.

use crate::expr::eval::Env;
use crate::expr::functions::{arg, text, unsupported, Func};
use crate::expr::tree::Expr;
use crate::types::decimal::{Decimal, RoundingStrategy};
use crate::types::value::{compare, Value};
use canyon_common::Result;
use std::cmp::Ordering;

fn string_fn(v: Value, f: impl FnOnce(&str) -> String) -> Value {
    match v.to_bytes() {
        None => Value::Null,
        Some(b) => Value::str(&f(&String::from_utf8_lossy(&b))),
    }
}

/// The string functions that evaluate their arguments as they need them.
pub(super) fn call_string(f: Func, args: &[Expr], env: &Env<'_>) -> Result<Value> {
    Ok(match f {
        Func::Concat => {
            let mut out = Vec::new();
            for i in 0..args.len() {
                match arg(args, i, env)?.to_bytes() {
                    None => return Ok(Value::Null),
                    Some(b) => out.extend_from_slice(&b),
                }
            }
            Value::Bytes(out)
        }
        // STRCMP compares under the collation its two operands agree on
        // (the binder marks them as for `=`), a PAD SPACE collation padding
        // the shorter with spaces; bytewise when they are binary.
        Func::Strcmp => {
            let (x, y) = match (arg(args, 0, env)?.to_bytes(), arg(args, 1, env)?.to_bytes()) {
                (Some(x), Some(y)) => (x, y),
                _ => return Ok(Value::Null),
            };
            let o = match crate::expr::eval::comparison_collation(&args[0], &args[1]) {
                Some(c) => c.compare_padded(&x, &y),
                None => x.cmp(&y),
            };
            Value::Int(match o {
                Ordering::Less => -1,
                Ordering::Equal => 0,
                Ordering::Greater => 1,
            })
        }
        Func::ConcatWs => {
            let sep = match arg(args, 0, env)?.to_bytes() {
                None => return Ok(Value::Null),
                Some(s) => s,
            };
            let mut out = Vec::new();
            let mut first = true;
            for i in 1..args.len() {
                if let Some(b) = arg(args, i, env)?.to_bytes() {
                    if !first {
                        out.extend_from_slice(&sep);
                    }
                    out.extend_from_slice(&b);
                    first = false;
                }
            }
            Value::Bytes(out)
        }
        Func::Length => match arg(args, 0, env)?.to_bytes() {
            None => Value::Null,
            Some(b) => Value::Int(b.len() as i64),
        },
        Func::LengthIn(cs) => match arg(args, 0, env)?.to_bytes() {
            None => Value::Null,
            Some(b) => Value::Int(match std::str::from_utf8(&b) {
                Ok(text) => cs.byte_len(text),
                Err(_) => b.len(),
            } as i64),
        },
        Func::CharLength => match arg(args, 0, env)?.to_bytes() {
            None => Value::Null,
            Some(b) => Value::Int(String::from_utf8_lossy(&b).chars().count() as i64),
        },
        Func::Upper => string_fn(arg(args, 0, env)?, str::to_uppercase),
        Func::Lower => string_fn(arg(args, 0, env)?, str::to_lowercase),
        Func::Trim => {
            let v = arg(args, 0, env)?;
            match args.len() {
                1 => string_fn(v, |s| s.trim_matches(' ').to_string()),
                _ => {
                    let what = arg(args, 1, env)?.to_display();
                    string_fn(v, |s| trim_both(s, &what))
                }
            }
        }
        Func::LTrim => string_fn(arg(args, 0, env)?, |s| {
            s.trim_start_matches(' ').to_string()
        }),
        Func::RTrim => string_fn(arg(args, 0, env)?, |s| s.trim_end_matches(' ').to_string()),
        Func::Substring => {
            let s = arg(args, 0, env)?;
            let pos = arg(args, 1, env)?.to_i64();
            let len = if args.len() > 2 {
                arg(args, 2, env)?.to_i64()
            } else {
                Some(i64::MAX)
            };
            match (s.to_bytes(), pos, len) {
                (Some(b), Some(pos), Some(len)) => {
                    let chars: Vec<char> = String::from_utf8_lossy(&b).chars().collect();
                    let n = chars.len() as i64;
                    let start = if pos > 0 {
                        pos - 1
                    } else if pos < 0 {
                        n + pos
                    } else {
                        n
                    };
                    if start < 0 || start >= n || len <= 0 {
                        Value::str("")
                    } else {
                        let end = start.saturating_add(len).min(n);
                        Value::str(
                            &chars[start as usize..end as usize]
                                .iter()
                                .collect::<String>(),
                        )
                    }
                }
                _ => Value::Null,
            }
        }
        Func::Left | Func::Right => {
            let s = arg(args, 0, env)?;
            match (s.to_bytes(), arg(args, 1, env)?.to_i64()) {
                (Some(b), Some(n)) => {
                    let chars: Vec<char> = String::from_utf8_lossy(&b).chars().collect();
                    let n = n.clamp(0, chars.len() as i64) as usize;
                    let part: String = if f == Func::Left {
                        chars[..n].iter().collect()
                    } else {
                        chars[chars.len() - n..].iter().collect()
                    };
                    Value::str(&part)
                }
                _ => Value::Null,
            }
        }
        Func::Replace => {
            let (s, from, to) = (arg(args, 0, env)?, arg(args, 1, env)?, arg(args, 2, env)?);
            match (s.to_bytes(), from.to_bytes(), to.to_bytes()) {
                (Some(s), Some(from), Some(to)) => {
                    let (s, from, to) = (
                        String::from_utf8_lossy(&s).into_owned(),
                        String::from_utf8_lossy(&from).into_owned(),
                        String::from_utf8_lossy(&to).into_owned(),
                    );
                    if from.is_empty() {
                        Value::str(&s)
                    } else {
                        Value::str(&s.replace(&from, &to))
                    }
                }
                _ => Value::Null,
            }
        }
        Func::Repeat => match (arg(args, 0, env)?.to_bytes(), arg(args, 1, env)?.to_i64()) {
            (Some(b), Some(n)) => {
                let n = n.max(0) as usize;
                if b.len().saturating_mul(n) > 64 << 20 {
                    Value::Null
                } else {
                    Value::Bytes(b.repeat(n))
                }
            }
            _ => Value::Null,
        },
        Func::Hex => match arg(args, 0, env)? {
            Value::Null => Value::Null,
            Value::Int(i) => Value::str(&format!("{:X}", i as u64)),
            Value::UInt(u) => Value::str(&format!("{u:X}")),
            other => {
                let b = other.to_bytes().unwrap_or_default();
                Value::str(&b.iter().map(|x| format!("{x:02X}")).collect::<String>())
            }
        },
        other => return Err(unsupported(other)),
    })
}

/// The string functions evaluated with all their arguments (`v`).
pub(super) fn call_string_values(f: Func, v: Vec<Value>, env: &Env<'_>) -> Result<Value> {
    let a0 = v.first().cloned().unwrap_or(Value::Null);
    let a1 = v.get(1).cloned().unwrap_or(Value::Null);
    let a2 = v.get(2).cloned().unwrap_or(Value::Null);
    Ok(match f {
        Func::LPad | Func::RPad => {
            let (s, fill) = (text(&a0).unwrap_or_default(), text(&a2).unwrap_or_default());
            match pad(&s, a1.to_i64().unwrap_or(0), &fill, f == Func::LPad) {
                Some(p) => Value::str(&p),
                None => Value::Null,
            }
        }
        Func::Locate => {
            let pos = if v.len() > 2 {
                a2.to_i64().unwrap_or(0)
            } else {
                1
            };
            Value::Int(locate(
                &text(&a0).unwrap_or_default(),
                &text(&a1).unwrap_or_default(),
                pos,
            ))
        }
        Func::Instr => Value::Int(locate(
            &text(&a1).unwrap_or_default(),
            &text(&a0).unwrap_or_default(),
            1,
        )),
        Func::Reverse => Value::str(
            &text(&a0)
                .unwrap_or_default()
                .chars()
                .rev()
                .collect::<String>(),
        ),
        Func::SubstringIndex => Value::str(&substring_index(
            &text(&a0).unwrap_or_default(),
            &text(&a1).unwrap_or_default(),
            a2.to_i64().unwrap_or(0),
        )),
        Func::Ascii => {
            Value::Int(a0.to_bytes().and_then(|b| b.first().copied()).unwrap_or(0) as i64)
        }
        Func::Char => {
            let mut out = Vec::new();
            for x in &v {
                if let Some(n) = x.to_i64() {
                    let bytes = (n as u32).to_be_bytes();
                    let skip = bytes.iter().take(3).take_while(|&&b| b == 0).count();
                    out.extend_from_slice(&bytes[skip..]);
                }
            }
            Value::Bytes(out)
        }
        Func::Space => {
            let n = a0.to_i64().unwrap_or(0);
            if n > (64 << 20) {
                Value::Null
            } else {
                Value::str(&" ".repeat(n.max(0) as usize))
            }
        }
        Func::Field => {
            if a0.is_null() {
                return Ok(Value::Int(0));
            }
            let pos = v[1..]
                .iter()
                .position(|x| compare(&a0, x) == Some(Ordering::Equal));
            Value::Int(pos.map(|p| p as i64 + 1).unwrap_or(0))
        }
        Func::FindInSet => {
            // MySQL: 0 when `str` holds a comma or `list` is empty. Items
            // compare bytewise (see the module doc of `functions`).
            let needle = a0.to_bytes().unwrap_or_default();
            let list = a1.to_bytes().unwrap_or_default();
            if needle.contains(&b',') || list.is_empty() {
                return Ok(Value::Int(0));
            }
            let pos = list.split(|c| *c == b',').position(|x| x == needle);
            match (pos, v.get(2)) {
                // A SET column's declared position (see `bind_members`).
                (Some(_), Some(declared)) => declared.clone(),
                (Some(p), None) => Value::Int(p as i64 + 1),
                (None, _) => Value::Int(0),
            }
        }
        // ENUM / SET values read as numbers are signed (MySQL: `c - 5` may
        // be negative); only a 64-member SET's top bit needs UNSIGNED.
        Func::EnumIndex => {
            // The value is a member's exact text (or ''): no collation needed.
            let b = a0.to_bytes().unwrap_or_default();
            let pos = v[1..]
                .iter()
                .position(|m| matches!(m, Value::Bytes(x) if *x == b));
            Value::Int(pos.map_or(0, |p| p as i64 + 1))
        }
        Func::SetMask => {
            let b = a0.to_bytes().unwrap_or_default();
            let mut mask = 0u64;
            if !b.is_empty() {
                for part in b.split(|c| *c == b',') {
                    if let Some(p) = v[1..]
                        .iter()
                        .position(|m| matches!(m, Value::Bytes(x) if x == part))
                    {
                        mask |= 1u64 << p.min(63);
                    }
                }
            }
            i64::try_from(mask).map_or(Value::UInt(mask), Value::Int)
        }
        Func::Elt => match a0.to_i64() {
            Some(n) if n >= 1 && (n as usize) < v.len() => v[n as usize].clone(),
            _ => Value::Null,
        },
        Func::Insert => {
            let s: Vec<char> = text(&a0).unwrap_or_default().chars().collect();
            let (pos, len) = (a1.to_i64().unwrap_or(0), a2.to_i64().unwrap_or(0));
            let new = text(&v[3]).unwrap_or_default();
            let n = s.len() as i64;
            if pos < 1 || pos > n {
                Value::str(&s.iter().collect::<String>())
            } else {
                let start = (pos - 1) as usize;
                let end = if len < 0 || start as i64 + len > n {
                    s.len()
                } else {
                    start + len as usize
                };
                let mut out: String = s[..start].iter().collect();
                out.push_str(&new);
                out.extend(&s[end..]);
                Value::str(&out)
            }
        }
        Func::Format => {
            let d = a1.to_i64().unwrap_or(0);
            match a0.to_decimal() {
                Some(x) => Value::str(&format_number(x, d)),
                // Beyond DECIMAL's range: fall back to the double's digits.
                None => Value::str(&crate::types::value::format_double(
                    a0.to_f64().unwrap_or(0.0),
                )),
            }
        }
        Func::Quote => match a0.to_bytes() {
            None => Value::str("NULL"),
            Some(b) => Value::Bytes(quote(&b)),
        },
        Func::Unhex => match a0.to_bytes().and_then(|b| unhex(&b)) {
            Some(b) => Value::Bytes(b),
            None => Value::Null,
        },
        Func::ToBase64 => Value::Bytes(to_base64(&a0.to_bytes().unwrap_or_default())),
        Func::FromBase64 => match a0.to_bytes().and_then(|b| from_base64(&b)) {
            Some(b) => Value::Bytes(b),
            None => Value::Null,
        },
        Func::Md5 => Value::str(&hex_lower(&md5(&a0.to_bytes().unwrap_or_default()))),
        Func::Sha1 => {
            use sha1::Digest;
            Value::str(&hex_lower(&sha1::Sha1::digest(
                a0.to_bytes().unwrap_or_default(),
            )))
        }
        Func::Sha2 => {
            let data = a0.to_bytes().unwrap_or_default();
            match a1.to_i64().and_then(|bits| sha2_digest(&data, bits)) {
                Some(digest) => Value::str(&hex_lower(&digest)),
                None => {
                    env.ctx.warn(
                        1583,
                        "Incorrect parameters in the call to native function 'sha2'",
                    );
                    Value::Null
                }
            }
        }
        Func::Crc32 => Value::UInt(crc32(&a0.to_bytes().unwrap_or_default()) as u64),
        other => return Err(unsupported(other)),
    })
}

fn trim_both(s: &str, what: &str) -> String {
    if what.is_empty() {
        return s.to_string();
    }
    let mut t = s;
    while let Some(r) = t.strip_prefix(what) {
        t = r;
    }
    while let Some(r) = t.strip_suffix(what) {
        t = r;
    }
    t.to_string()
}

fn pad(s: &str, len: i64, fill: &str, left: bool) -> Option<String> {
    if !(0..=(64 << 20)).contains(&len) {
        return None;
    }
    let chars: Vec<char> = s.chars().collect();
    let len = len as usize;
    if len <= chars.len() {
        return Some(chars[..len].iter().collect());
    }
    let fill: Vec<char> = fill.chars().collect();
    if fill.is_empty() {
        return None;
    }
    let padding: String = fill.iter().cycle().take(len - chars.len()).collect();
    Some(if left {
        padding + s
    } else {
        s.to_string() + &padding
    })
}

/// LOCATE(needle, hay, pos): 1-based character position, 0 when absent.
fn locate(needle: &str, hay: &str, pos: i64) -> i64 {
    let hay: Vec<char> = hay.chars().collect();
    let needle: Vec<char> = needle.chars().collect();
    if pos < 1 || pos - 1 > hay.len() as i64 {
        return 0;
    }
    let start = (pos - 1) as usize;
    if needle.is_empty() {
        return pos;
    }
    (start..hay.len())
        .find(|&i| hay[i..].starts_with(&needle))
        .map(|i| i as i64 + 1)
        .unwrap_or(0)
}

fn substring_index(s: &str, delim: &str, count: i64) -> String {
    if delim.is_empty() || count == 0 {
        return String::new();
    }
    if count > 0 {
        let mut idx = 0;
        for (seen, (i, _)) in s.match_indices(delim).enumerate() {
            if seen as i64 + 1 == count {
                return s[..i].to_string();
            }
            idx = i;
        }
        let _ = idx;
        s.to_string()
    } else {
        let want = count.unsigned_abs();
        for (seen, (i, _)) in s.rmatch_indices(delim).enumerate() {
            if seen as u64 + 1 == want {
                return s[i + delim.len()..].to_string();
            }
        }
        s.to_string()
    }
}

/// FORMAT(x, d): rounded half away from zero, thousands grouped with ','.
fn format_number(x: Decimal, d: i64) -> String {
    let d = d.clamp(0, 30) as u32;
    let mut r = x.round_dp_with_strategy(d, RoundingStrategy::MidpointAwayFromZero);
    r.rescale(d);
    let s = r.abs().to_string();
    let (int, frac) = s.split_once('.').unwrap_or((&s, ""));
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let mut out = String::new();
    if r.is_sign_negative() && !r.is_zero() {
        out.push('-');
    }
    out.push_str(&grouped);
    if d > 0 {
        out.push('.');
        out.push_str(frac);
        for _ in frac.len()..d as usize {
            out.push('0');
        }
    }
    out
}

fn quote(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len() + 2);
    out.push(b'\'');
    for &c in b {
        match c {
            b'\\' | b'\'' => {
                out.push(b'\\');
                out.push(c);
            }
            0 => out.extend_from_slice(b"\\0"),
            0x1a => out.extend_from_slice(b"\\Z"),
            _ => out.push(c),
        }
    }
    out.push(b'\'');
    out
}

fn unhex(s: &[u8]) -> Option<Vec<u8>> {
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(s.len() / 2 + 1);
    let mut it = s.iter();
    if s.len() % 2 == 1 {
        out.push(digit(*it.next()?)?);
    }
    while let (Some(&h), Some(&l)) = (it.next(), it.next()) {
        out.push(digit(h)? << 4 | digit(l)?);
    }
    Some(out)
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// TO_BASE64: MySQL breaks the output with a newline every 76 characters.
fn to_base64(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len() * 4 / 3 + 4);
    for (n, chunk) in b.chunks(3).enumerate() {
        if n > 0 && n % 19 == 0 {
            out.push(b'\n');
        }
        let v = (chunk[0] as u32) << 16
            | (*chunk.get(1).unwrap_or(&0) as u32) << 8
            | *chunk.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[(v >> (18 - 6 * i) & 63) as usize]);
            } else {
                out.push(b'=');
            }
        }
    }
    out
}

fn from_base64(b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(b.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    let mut padding = false;
    for &c in b {
        if c.is_ascii_whitespace() {
            continue;
        }
        if c == b'=' {
            padding = true;
            continue;
        }
        if padding {
            return None;
        }
        let v = B64.iter().position(|&x| x == c)? as u32;
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

fn hex_lower(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// CRC-32 (ISO-HDLC, the zlib polynomial), as MySQL's CRC32().
fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                crc >> 1 ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// MD5 (RFC 1321), from RustCrypto's `md-5`.
fn md5(input: &[u8]) -> [u8; 16] {
    use md5::Digest;
    md5::Md5::digest(input).into()
}

/// SHA-2 of `bits` (224, 256, 384 or 512) as MySQL's SHA2(), from RustCrypto's
/// `sha2`; `None` for another length.
fn sha2_digest(input: &[u8], bits: i64) -> Option<Vec<u8>> {
    use sha2::Digest;
    Some(match bits {
        0 | 256 => sha2::Sha256::digest(input).to_vec(),
        224 => sha2::Sha224::digest(input).to_vec(),
        384 => sha2::Sha384::digest(input).to_vec(),
        512 => sha2::Sha512::digest(input).to_vec(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_match_mysql() {
        assert_eq!(format_number(Decimal::new(-12345, 1), 0), "-1,235");
        assert_eq!(
            format_number(Decimal::new(1234567891, 3), 2),
            "1,234,567.89"
        );
        assert_eq!(substring_index("a.b.c", ".", -2), "b.c");
        assert_eq!(locate("", "abc", 3), 3);
        assert_eq!(crc32(b"MySQL"), 3_259_397_556);
        assert_eq!(hex_lower(&md5(b"abc")), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(
            sha2_digest(b"abc", 256).map(|d| hex_lower(&d)).as_deref(),
            Some("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        );
        assert_eq!(sha2_digest(b"abc", 512).map(|d| d.len()), Some(64));
        assert_eq!(sha2_digest(b"abc", 100), None);
        assert_eq!(to_base64(b"ab"), b"YWI=");
        assert_eq!(from_base64(b"YWI="), Some(b"ab".to_vec()));
    }
}
