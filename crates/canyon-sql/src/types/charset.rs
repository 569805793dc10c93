//! Character sets: conversion between UTF-8 and the other encodings MySQL
//! clients and columns may use.
//!
//! # The model
//! Canyon keeps every character string as UTF-8 (utf8mb4), whatever the
//! column or connection declares. A character set other than UTF-8 is a
//! *conversion at the edges*, as MySQL does between `character_set_client`,
//! the column's set and `character_set_results`:
//!
//! ```text
//!  client bytes (character_set_client)
//!     │  Charset::decode           COM_QUERY / COM_STMT_PREPARE text,
//!     ▼                            COM_STMT_EXECUTE string parameters
//!  UTF-8 statement text ── parse ── execute ── UTF-8 values in rows
//!     │                                          │
//!     │  a column declared CHARACTER SET cs:     │  Charset::encode
//!     │  Charset::unrepresentable on write       ▼  (character_set_results;
//!     ▼  (1366, or '?' with a warning)          NULL = no conversion)
//!  stored UTF-8                              client bytes
//! ```
//!
//! So keys, collations and the row format are untouched by character sets:
//! a `latin1` column stores the UTF-8 of its characters, limited to the
//! characters latin1 has. What a client sees is what MySQL sends, since every
//! character is converted to the same bytes on the way out.
//!
//! # Why encoding_rs
//! The tables of the legacy encodings (windows-1252, KOI8-R, Shift_JIS, GBK,
//! Big5, EUC-KR ...) are large and easy to get subtly wrong. `encoding_rs` is
//! the WHATWG Encoding Standard's implementation that Firefox ships: tested
//! tables in both directions, no allocation when the input is already valid
//! in the target (ASCII text through a latin1 session costs a scan, not a
//! copy), and well kept. Its encoders report each unmappable character,
//! which is what MySQL's `?` replacement and error 1366 need.
//!
//! # Mapping MySQL's names to encodings
//! | MySQL      | encoding (WHATWG)  | note |
//! |------------|--------------------|------|
//! | latin1     | windows-1252       | MySQL's latin1 *is* cp1252, with 0x81, 0x8D, 0x8F, 0x90, 0x9D as the C1 controls: every byte maps, as WHATWG's table does |
//! | latin2     | ISO-8859-2         | |
//! | cp1250     | windows-1250       | |
//! | cp1251     | windows-1251       | |
//! | koi8r      | KOI8-R             | |
//! | greek      | ISO-8859-7         | |
//! | hebrew     | ISO-8859-8         | |
//! | sjis       | Shift_JIS          | WHATWG's is Windows-31J: the NEC / IBM extensions of cp932 too |
//! | cp932      | Shift_JIS          | |
//! | ujis       | EUC-JP             | |
//! | gbk        | GBK                | WHATWG's GBK decodes as gb18030: a few more characters than MySQL's gbk |
//! | big5       | Big5               | WHATWG's Big5 is Big5-HKSCS on decode |
//! | euckr      | EUC-KR             | WHATWG's is windows-949 (UHC), a superset |
//! | ascii      | (own)              | bytes above 0x7F decode to `?`, as MySQL converts them |
//! | utf8mb3    | UTF-8              | characters above U+FFFF are not representable |
//! | utf8mb4    | UTF-8              | |
//! | binary     | none               | bytes pass unchanged |
//!
//! Not supported (1115 ER_UNKNOWN_CHARACTER_SET): ucs2, utf16, utf16le, utf32
//! (not ASCII-compatible: the statement text could not be read), gb2312,
//! gb18030, eucjpms, dec8, cp850, hp8, swe7, latin5, latin7, armscii8,
//! tis620, keybcs2, macce, macroman, cp852, cp866, cp1256, cp1257, geostd8 and
//! koi8u.

use encoding_rs::Encoding;
use std::borrow::Cow;

/// A character set Canyon can convert to and from UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Charset {
    /// `utf8mb4`: UTF-8, the storage encoding.
    Utf8mb4,
    /// `utf8mb3` (`utf8`): UTF-8 of the Basic Multilingual Plane only.
    Utf8mb3,
    /// `latin1`: MySQL's cp1252.
    Latin1,
    /// `latin2`: ISO-8859-2.
    Latin2,
    /// `cp1250`: Windows Central European.
    Cp1250,
    /// `cp1251`: Windows Cyrillic.
    Cp1251,
    /// `koi8r`: KOI8-R Cyrillic.
    Koi8r,
    /// `greek`: ISO-8859-7.
    Greek,
    /// `hebrew`: ISO-8859-8.
    Hebrew,
    /// `sjis`: Shift_JIS.
    Sjis,
    /// `cp932`: Windows-31J, Microsoft's Shift_JIS.
    Cp932,
    /// `ujis`: EUC-JP.
    Ujis,
    /// `gbk`: GBK.
    Gbk,
    /// `big5`: Big5.
    Big5,
    /// `euckr`: EUC-KR.
    Euckr,
    /// `ascii`: US-ASCII.
    Ascii,
    /// `binary`: bytes, no conversion.
    Binary,
}

impl Charset {
    /// Every supported character set.
    pub const ALL: [Charset; 17] = [
        Charset::Utf8mb4,
        Charset::Utf8mb3,
        Charset::Latin1,
        Charset::Latin2,
        Charset::Cp1250,
        Charset::Cp1251,
        Charset::Koi8r,
        Charset::Greek,
        Charset::Hebrew,
        Charset::Sjis,
        Charset::Cp932,
        Charset::Ujis,
        Charset::Gbk,
        Charset::Big5,
        Charset::Euckr,
        Charset::Ascii,
        Charset::Binary,
    ];

    /// MySQL's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Charset::Utf8mb4 => "utf8mb4",
            Charset::Utf8mb3 => "utf8mb3",
            Charset::Latin1 => "latin1",
            Charset::Latin2 => "latin2",
            Charset::Cp1250 => "cp1250",
            Charset::Cp1251 => "cp1251",
            Charset::Koi8r => "koi8r",
            Charset::Greek => "greek",
            Charset::Hebrew => "hebrew",
            Charset::Sjis => "sjis",
            Charset::Cp932 => "cp932",
            Charset::Ujis => "ujis",
            Charset::Gbk => "gbk",
            Charset::Big5 => "big5",
            Charset::Euckr => "euckr",
            Charset::Ascii => "ascii",
            Charset::Binary => "binary",
        }
    }

    /// The character set named `name` (case-insensitive, quotes and
    /// backticks ignored; `utf8` is utf8mb3, as in MySQL 8.0).
    pub fn from_name(name: &str) -> Option<Charset> {
        let n = name.trim_matches(['`', '\'', '"']);
        if n.eq_ignore_ascii_case("utf8") {
            return Some(Charset::Utf8mb3);
        }
        Charset::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(n))
    }

    /// The encoding that converts it; `None` for the UTF-8 sets, ascii and
    /// binary, which are handled without a table.
    fn encoding(self) -> Option<&'static Encoding> {
        Some(match self {
            Charset::Latin1 => encoding_rs::WINDOWS_1252,
            Charset::Latin2 => encoding_rs::ISO_8859_2,
            Charset::Cp1250 => encoding_rs::WINDOWS_1250,
            Charset::Cp1251 => encoding_rs::WINDOWS_1251,
            Charset::Koi8r => encoding_rs::KOI8_R,
            Charset::Greek => encoding_rs::ISO_8859_7,
            Charset::Hebrew => encoding_rs::ISO_8859_8,
            // WHATWG's Shift_JIS is Windows-31J: MySQL's cp932, and a
            // superset of its sjis (NEC and IBM extensions).
            Charset::Sjis | Charset::Cp932 => encoding_rs::SHIFT_JIS,
            Charset::Ujis => encoding_rs::EUC_JP,
            Charset::Gbk => encoding_rs::GBK,
            Charset::Big5 => encoding_rs::BIG5,
            Charset::Euckr => encoding_rs::EUC_KR,
            Charset::Utf8mb4 | Charset::Utf8mb3 | Charset::Ascii | Charset::Binary => return None,
        })
    }

    /// Whether text in it is UTF-8 already (utf8mb4, utf8mb3) or is not
    /// converted at all (binary): the paths that need no conversion.
    pub fn is_passthrough(self) -> bool {
        matches!(self, Charset::Utf8mb4 | Charset::Utf8mb3 | Charset::Binary)
    }

    /// Whether a byte 0x5C (backslash) or a quote may be the second byte of
    /// a multi-byte character: then the raw text cannot be scanned for
    /// string literals before it is decoded.
    pub fn has_ascii_trail_bytes(self) -> bool {
        matches!(
            self,
            Charset::Sjis | Charset::Cp932 | Charset::Gbk | Charset::Big5
        )
    }

    /// Bytes in this character set to UTF-8 text. Bytes that are not valid
    /// in it become U+FFFD (MySQL would refuse the statement with 1300 or
    /// store `?`); in ascii, `?`, as MySQL and MariaDB convert them (a
    /// client in `SET NAMES ascii` sending `'é'` stores `??`). UTF-8 and binary input is returned as it is when valid,
    /// else lossily.
    pub fn decode(self, bytes: &[u8]) -> Cow<'_, str> {
        match self {
            Charset::Ascii => {
                if bytes.is_ascii() {
                    // ASCII is UTF-8.
                    Cow::Borrowed(std::str::from_utf8(bytes).expect("ASCII is UTF-8"))
                } else {
                    Cow::Owned(
                        bytes
                            .iter()
                            .map(|&b| if b < 0x80 { b as char } else { '?' })
                            .collect(),
                    )
                }
            }
            _ => match self.encoding() {
                Some(e) => e.decode_without_bom_handling(bytes).0,
                None => String::from_utf8_lossy(bytes),
            },
        }
    }

    /// UTF-8 text to bytes in this character set; each character it cannot
    /// represent becomes `?`, as MySQL converts (`my_convert`). Borrowed when
    /// nothing changes (ASCII text, or a UTF-8 target).
    pub fn encode(self, text: &str) -> Cow<'_, [u8]> {
        match self {
            Charset::Utf8mb4 | Charset::Binary => Cow::Borrowed(text.as_bytes()),
            Charset::Utf8mb3 | Charset::Ascii => {
                let limit = if self == Charset::Ascii { 0x7F } else { 0xFFFF };
                if text.chars().all(|c| c as u32 <= limit) {
                    return Cow::Borrowed(text.as_bytes());
                }
                let mut out = String::with_capacity(text.len());
                for c in text.chars() {
                    out.push(if c as u32 <= limit { c } else { '?' });
                }
                Cow::Owned(out.into_bytes())
            }
            _ => {
                let e = self
                    .encoding()
                    .expect("the table-driven sets have an encoding");
                if text.is_ascii() {
                    return Cow::Borrowed(text.as_bytes());
                }
                let mut encoder = e.new_encoder();
                let mut out = Vec::with_capacity(text.len() + 8);
                let mut rest = text;
                loop {
                    // Room for what is left: no multi-byte target needs more
                    // bytes than UTF-8 for a character.
                    out.reserve(rest.len() + 8);
                    let (result, read) =
                        encoder.encode_from_utf8_to_vec_without_replacement(rest, &mut out, true);
                    rest = &rest[read..];
                    match result {
                        encoding_rs::EncoderResult::InputEmpty => break,
                        encoding_rs::EncoderResult::OutputFull => {}
                        encoding_rs::EncoderResult::Unmappable(_) => out.push(b'?'),
                    }
                }
                Cow::Owned(out)
            }
        }
    }

    /// The first character of `text` this character set cannot represent,
    /// if any (binary and utf8mb4 represent everything).
    pub fn unrepresentable(self, text: &str) -> Option<char> {
        match self {
            Charset::Utf8mb4 | Charset::Binary => None,
            Charset::Utf8mb3 => text.chars().find(|c| *c as u32 > 0xFFFF),
            Charset::Ascii => text.chars().find(|c| !c.is_ascii()),
            _ => {
                if text.is_ascii() {
                    return None;
                }
                let e = self
                    .encoding()
                    .expect("the table-driven sets have an encoding");
                let mut encoder = e.new_encoder();
                let mut buf = [0u8; 16];
                let mut tmp = [0u8; 4];
                for c in text.chars().filter(|c| !c.is_ascii()) {
                    let (result, _, _) = encoder.encode_from_utf8_without_replacement(
                        c.encode_utf8(&mut tmp),
                        &mut buf,
                        false,
                    );
                    if let encoding_rs::EncoderResult::Unmappable(u) = result {
                        return Some(u);
                    }
                }
                None
            }
        }
    }

    /// `text` limited to this character set's repertoire: each character it
    /// cannot represent becomes `?` (what converting to it and back yields).
    pub fn restrict(self, text: &str) -> Cow<'_, str> {
        if self.unrepresentable(text).is_none() {
            return Cow::Borrowed(text);
        }
        Cow::Owned(
            text.chars()
                .map(|c| {
                    let mut tmp = [0u8; 4];
                    if self.unrepresentable(c.encode_utf8(&mut tmp)).is_some() {
                        '?'
                    } else {
                        c
                    }
                })
                .collect(),
        )
    }

    /// How many bytes `text` takes in this character set (LENGTH() of a
    /// column declared in it).
    pub fn byte_len(self, text: &str) -> usize {
        self.encode(text).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_maps_every_byte_both_ways() {
        let all: Vec<u8> = (0..=255u8).collect();
        let text = Charset::Latin1.decode(&all);
        assert_eq!(text.chars().count(), 256);
        assert!(!text.contains('\u{FFFD}'));
        assert_eq!(&*Charset::Latin1.encode(&text), &all[..]);
        assert_eq!(Charset::Latin1.decode(&[0x80]), "€");
        // MySQL's conversion from ascii: '?' for each byte above 0x7F.
        assert_eq!(Charset::Ascii.decode(&[b'a', 0xE0, 0xA4]), "a??");
        assert_eq!(&*Charset::Latin1.encode("é€"), &[0xE9, 0x80]);
    }

    #[test]
    fn unmappable_characters_become_question_marks() {
        assert_eq!(&*Charset::Latin1.encode("aж😀b"), b"a??b");
        assert_eq!(&*Charset::Utf8mb3.encode("a😀"), b"a?");
        assert_eq!(&*Charset::Ascii.encode("é"), b"?");
        assert_eq!(Charset::Latin1.unrepresentable("abé€ж"), Some('ж'));
        assert_eq!(Charset::Cp1251.unrepresentable("жЖ"), None);
        assert_eq!(Charset::Cp1251.unrepresentable("é"), Some('é'));
        assert_eq!(Charset::Latin1.restrict("éж"), "é?");
    }

    #[test]
    fn cyrillic_and_cjk_round_trip() {
        assert_eq!(
            &*Charset::Cp1251.encode("Привет"),
            &[0xCF, 0xF0, 0xE8, 0xE2, 0xE5, 0xF2]
        );
        assert_eq!(
            Charset::Cp1251.decode(&[0xCF, 0xF0, 0xE8, 0xE2, 0xE5, 0xF2]),
            "Привет"
        );
        assert_eq!(Charset::Koi8r.decode(&[0xF0]), "П");
        for cs in [Charset::Sjis, Charset::Ujis] {
            assert_eq!(cs.decode(&cs.encode("日本語")), "日本語");
        }
        assert_eq!(Charset::Gbk.decode(&Charset::Gbk.encode("中文")), "中文");
        assert_eq!(Charset::Big5.decode(&Charset::Big5.encode("中文")), "中文");
        assert_eq!(
            Charset::Euckr.decode(&Charset::Euckr.encode("한국어")),
            "한국어"
        );
        assert_eq!(Charset::Latin1.byte_len("é"), 1);
    }

    #[test]
    fn names() {
        assert_eq!(Charset::from_name("UTF8"), Some(Charset::Utf8mb3));
        assert_eq!(Charset::from_name("`Latin1`"), Some(Charset::Latin1));
        assert_eq!(Charset::from_name("utf16"), None);
    }
}
