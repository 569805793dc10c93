//! DECIMAL's packed binary form (MySQL's `decimal2bin` / `bin2decimal`).
//!
//! A DECIMAL(P, S) has `P - S` integer digits and `S` fraction digits. Each
//! side is cut into groups of 9 decimal digits, counted outwards from the
//! point; a full group is a 4-byte big-endian number, a partial group (the
//! leftmost integer digits, the rightmost fraction digits) takes only the
//! bytes its digits need:
//!
//! ```text
//! digits   0 1 2 3 4 5 6 7 8 9
//! bytes    0 1 1 2 2 3 3 4 4 4
//!
//! DECIMAL(14,4) 1234567890.1234  ->  [0x00 0x01] [0x0d 0xfb 0x38 0xd2] [0x04 0xd2]
//!                                     "1"         "234567890"          "1234"
//! ```
//!
//! The first byte's top bit is then flipped so that positive values sort
//! above negative ones; a negative value is stored with every byte inverted
//! (before the flip), so that `memcmp` orders the bytes like the numbers.
//! The total length depends only on (P, S), which the table map carries.

use crate::Error;

const DIG_PER_DEC: usize = 9;
const DIG2BYTES: [usize; 10] = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];

/// Bytes of a DECIMAL(precision, scale) value.
pub(crate) fn bin_size(precision: u8, scale: u8) -> usize {
    let intg = usize::from(precision - scale.min(precision));
    let frac = usize::from(scale);
    (intg / DIG_PER_DEC) * 4
        + DIG2BYTES[intg % DIG_PER_DEC]
        + (frac / DIG_PER_DEC) * 4
        + DIG2BYTES[frac % DIG_PER_DEC]
}

/// Packs `text` (`-123.45`, `0.5`, `7`; an optional sign, digits, an optional
/// point and fraction digits) into a DECIMAL(precision, scale). Fraction
/// digits beyond `scale` must be zeros and the integer part must fit in
/// `precision - scale` digits: the value was already converted to the column's
/// type when it was stored, so anything else is a caller error.
pub(crate) fn encode(text: &str, precision: u8, scale: u8, out: &mut Vec<u8>) -> Result<(), Error> {
    let bad = || {
        Error::Invalid(format!(
            "'{text}' is not a DECIMAL({precision},{scale}) value"
        ))
    };
    if precision == 0 || precision > 65 || scale > 30 || scale > precision {
        return Err(Error::Invalid(format!(
            "DECIMAL({precision},{scale}) is not a valid type"
        )));
    }
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (int_part, frac_part) = body.split_once('.').unwrap_or((body, ""));
    if (int_part.is_empty() && frac_part.is_empty())
        || !int_part.bytes().all(|b| b.is_ascii_digit())
        || !frac_part.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    let int_part = int_part.trim_start_matches('0');
    let intg = usize::from(precision - scale);
    let frac = usize::from(scale);
    if int_part.len() > intg {
        return Err(bad());
    }
    if frac_part.len() > frac && frac_part[frac..].bytes().any(|b| b != b'0') {
        return Err(bad());
    }
    // Left-pad the integer digits to intg, right-pad the fraction to scale.
    let mut int_digits = vec![0u8; intg - int_part.len()];
    int_digits.extend(int_part.bytes().map(|b| b - b'0'));
    let mut frac_digits: Vec<u8> = frac_part.bytes().take(frac).map(|b| b - b'0').collect();
    frac_digits.resize(frac, 0);
    let is_zero = int_digits.iter().chain(&frac_digits).all(|&d| d == 0);
    // -0 is 0 (MySQL never stores a negative zero).
    let negative = negative && !is_zero;

    let start = out.len();
    let group = |digits: &[u8]| digits.iter().fold(0u32, |acc, &d| acc * 10 + u32::from(d));
    let put = |out: &mut Vec<u8>, v: u32, n: usize| {
        out.extend_from_slice(&v.to_be_bytes()[4 - n..]);
    };
    let lead = intg % DIG_PER_DEC;
    if lead > 0 {
        put(out, group(&int_digits[..lead]), DIG2BYTES[lead]);
    }
    for chunk in int_digits[lead..].chunks(DIG_PER_DEC) {
        put(out, group(chunk), 4);
    }
    for chunk in frac_digits.chunks(DIG_PER_DEC) {
        let n = if chunk.len() == DIG_PER_DEC {
            4
        } else {
            DIG2BYTES[chunk.len()]
        };
        put(out, group(chunk), n);
    }
    debug_assert_eq!(out.len() - start, bin_size(precision, scale));
    if negative {
        for b in &mut out[start..] {
            *b = !*b;
        }
    }
    out[start] ^= 0x80;
    Ok(())
}

/// Unpacks a DECIMAL(precision, scale) into plain text with exactly `scale`
/// fraction digits (`-123.45`, `0.50`, `7`), MySQL's display form.
pub(crate) fn decode(bytes: &[u8], precision: u8, scale: u8) -> Result<String, Error> {
    if precision == 0 || scale > precision || bytes.len() != bin_size(precision, scale) {
        return Err(Error::Malformed(format!(
            "{} bytes for a DECIMAL({precision},{scale})",
            bytes.len()
        )));
    }
    let mut b = bytes.to_vec();
    let negative = b[0] & 0x80 == 0;
    b[0] ^= 0x80;
    if negative {
        for x in &mut b {
            *x = !*x;
        }
    }
    let intg = usize::from(precision - scale);
    let frac = usize::from(scale);
    let mut pos = 0;
    let mut take = |n: usize, digits: usize| -> Result<String, Error> {
        let v = b[pos..pos + n]
            .iter()
            .fold(0u32, |acc, &x| (acc << 8) | u32::from(x));
        pos += n;
        if u64::from(v) >= 10u64.pow(digits as u32) {
            return Err(Error::Malformed(format!(
                "DECIMAL group {v} has more than {digits} digits"
            )));
        }
        Ok(format!("{v:0digits$}"))
    };
    let mut int_text = String::new();
    let lead = intg % DIG_PER_DEC;
    if lead > 0 {
        int_text.push_str(&take(DIG2BYTES[lead], lead)?);
    }
    for _ in 0..intg / DIG_PER_DEC {
        int_text.push_str(&take(4, DIG_PER_DEC)?);
    }
    let mut frac_text = String::new();
    for _ in 0..frac / DIG_PER_DEC {
        frac_text.push_str(&take(4, DIG_PER_DEC)?);
    }
    let tail = frac % DIG_PER_DEC;
    if tail > 0 {
        frac_text.push_str(&take(DIG2BYTES[tail], tail)?);
    }
    let int_text = int_text.trim_start_matches('0');
    let mut s = String::new();
    let is_zero = int_text.is_empty() && frac_text.bytes().all(|d| d == b'0');
    if negative && !is_zero {
        s.push('-');
    }
    s.push_str(if int_text.is_empty() { "0" } else { int_text });
    if frac > 0 {
        s.push('.');
        s.push_str(&frac_text);
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(text: &str, p: u8, s: u8) -> Vec<u8> {
        let mut out = Vec::new();
        encode(text, p, s, &mut out).expect("encodes");
        out
    }

    #[test]
    fn matches_mysql_worked_example() {
        // The example of MySQL's decimal2bin comment: DECIMAL(14,4) 1234567890.1234.
        assert_eq!(
            enc("1234567890.1234", 14, 4),
            [0x81, 0x0d, 0xfb, 0x38, 0xd2, 0x04, 0xd2]
        );
        // Its negation: every byte inverted, then the top bit flipped.
        assert_eq!(
            enc("-1234567890.1234", 14, 4),
            [0x7e, 0xf2, 0x04, 0xc7, 0x2d, 0xfb, 0x2d]
        );
    }

    #[test]
    fn round_trips_across_group_boundaries() {
        for (text, p, s, shown) in [
            ("0", 10, 0, "0"),
            ("-0.00", 5, 2, "0.00"),
            ("1.5", 10, 2, "1.50"),
            ("-123.45", 5, 2, "-123.45"),
            (
                "99999999999999999999.999999999",
                29,
                9,
                "99999999999999999999.999999999",
            ),
            (
                "-12345678901234567890123456789012345.123456789012345678901234567890",
                65,
                30,
                "-12345678901234567890123456789012345.123456789012345678901234567890",
            ),
            (".5", 3, 1, "0.5"),
            ("7", 1, 0, "7"),
            ("0.000000001", 10, 10, "0.0000000010"),
        ] {
            let b = enc(text, p, s);
            assert_eq!(b.len(), bin_size(p, s));
            assert_eq!(decode(&b, p, s).expect("decodes"), shown, "{text}");
        }
    }

    #[test]
    fn byte_order_follows_numeric_order() {
        let vals = ["-100.5", "-1.25", "-0.01", "0", "0.01", "1.25", "100.5"];
        let enc: Vec<_> = vals.iter().map(|v| enc(v, 6, 2)).collect();
        assert!(enc.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn out_of_range_and_malformed_text_are_errors() {
        let mut out = Vec::new();
        for (t, p, s) in [
            ("1000", 5, 2),
            ("1.234", 5, 2),
            ("1e5", 5, 0),
            ("", 5, 0),
            ("1", 66, 0),
        ] {
            assert!(encode(t, p, s, &mut out).is_err(), "{t}");
        }
        encode("1.230", 5, 2, &mut out).expect("trailing zeros beyond the scale are fine");
        assert!(decode(&[0x80], 5, 2).is_err());
    }
}
