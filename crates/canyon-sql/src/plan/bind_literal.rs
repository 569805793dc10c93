//! Literals as the binder types them: sqlparser's literal values to
//! [`Value`]s ([`literal`]), numbers as MySQL types them ([`number_literal`]:
//! BIGINT, BIGINT UNSIGNED, DECIMAL or DOUBLE), and the character set
//! introducers a literal may carry ([`is_utf8_introducer`]).
//!
//! A file apart from [`bind`](super::bind) because these read one token of
//! the AST each, with no binder state: the rules can be read, and tested, on
//! their own.

use crate::types::decimal::Decimal;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use sqlparser::ast;

/// Whether `_name` introduces a literal whose bytes Canyon takes as they are:
/// binary, or one of the names of UTF-8 (the only character set it stores).
pub fn is_utf8_introducer(name: &str) -> bool {
    ["_binary", "_utf8mb4", "_utf8mb3", "_utf8"]
        .iter()
        .any(|i| name.eq_ignore_ascii_case(i))
}

/// Converts a literal of the AST into a value.
pub fn literal(v: &ast::Value) -> Result<Value> {
    Ok(match v {
        ast::Value::Number(s, _) => number_literal(s)?,
        ast::Value::SingleQuotedString(s)
        | ast::Value::DoubleQuotedString(s)
        | ast::Value::EscapedStringLiteral(s)
        | ast::Value::NationalStringLiteral(s)
        | ast::Value::TripleSingleQuotedString(s)
        | ast::Value::TripleDoubleQuotedString(s) => Value::str(s),
        // MySQL's b'0101' is a bit-value literal: a binary string of the
        // bits, right-aligned in whole bytes (b'101' is 0x05).
        ast::Value::SingleQuotedByteStringLiteral(s)
        | ast::Value::DoubleQuotedByteStringLiteral(s) => {
            Value::Bytes(decode_bits(s).ok_or_else(|| Error::Syntax(format!("b'{s}'")))?)
        }
        ast::Value::HexStringLiteral(h) => {
            Value::Bytes(decode_hex(h).ok_or_else(|| Error::Syntax(format!("X'{h}'")))?)
        }
        ast::Value::Boolean(b) => Value::Int(*b as i64),
        ast::Value::Null => Value::Null,
        other => return Err(Error::Syntax(other.to_string())),
    })
}

/// The bytes of a bit-value literal's digits; `None` if one is not 0 or 1.
fn decode_bits(bits: &str) -> Option<Vec<u8>> {
    if !bits.bytes().all(|b| b == b'0' || b == b'1') {
        return None;
    }
    let mut out = vec![0u8; bits.len().div_ceil(8)];
    for (i, b) in bits.bytes().rev().enumerate() {
        if b == b'1' {
            let at = out.len() - 1 - i / 8;
            out[at] |= 1 << (i % 8);
        }
    }
    Some(out)
}

/// Parses a numeric literal as MySQL types it: integers as BIGINT (UNSIGNED when
/// they only fit that), with a point as DECIMAL, with an exponent as DOUBLE.
pub fn number_literal(s: &str) -> Result<Value> {
    if let Ok(i) = s.parse::<i64>() {
        return Ok(Value::Int(i));
    }
    if let Ok(u) = s.parse::<u64>() {
        return Ok(Value::UInt(u));
    }
    if !s.contains(['e', 'E']) {
        if let Ok(d) = Decimal::from_str_exact(s) {
            // `-0.0` is 0.0, as MySQL's negation of a zero.
            return Ok(Value::Decimal(if d.is_zero() { d.abs() } else { d }));
        }
    }
    s.parse::<f64>()
        .map(Value::Double)
        .map_err(|_| Error::Syntax(s.to_string()))
}

fn decode_hex(h: &str) -> Option<Vec<u8>> {
    let h = if h.len() % 2 == 1 {
        format!("0{h}")
    } else {
        h.to_string()
    };
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_literals_are_typed_like_mysql() {
        assert_eq!(number_literal("42"), Ok(Value::Int(42)));
        assert_eq!(
            number_literal("18446744073709551615"),
            Ok(Value::UInt(u64::MAX))
        );
        assert_eq!(
            number_literal("1.50"),
            Ok(Value::Decimal(Decimal::new(150, 2)))
        );
        assert_eq!(number_literal("1e3"), Ok(Value::Double(1000.0)));
    }
}
