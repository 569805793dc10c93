//! Collations: how character strings compare, sort, group and are keyed.
//!
//! # The model
//! Canyon stores every character string as UTF-8 (a `latin1` or `ascii` column
//! holds UTF-8 too; see docs/compatibility.md). What differs between columns is
//! the *collation*, which MySQL defines by two things:
//!
//! - a **weighting**: the sequence of weights a string maps to. Two strings are
//!   equal when their weight sequences are, and order as those sequences do
//!   lexicographically. `_bin` and `binary` weigh by bytes;
//!   `utf8mb4_general_ci` gives each BMP character one weight, the upper case of
//!   its base letter (so 'a' = 'A' = 'á'), and every supplementary character
//!   (emoji) the same weight 0xFFFD; the UCA collations (`utf8mb4_0900_ai_ci`,
//!   `utf8mb4_unicode_ci`) use the primary weights of the Unicode Collation
//!   Algorithm's default table (DUCET), which is what "accent- and
//!   case-insensitive" means there ('ß' = 'ss', 'Å' = 'a', and punctuation sorts
//!   before digits before letters);
//! - a **pad attribute**: PAD SPACE collations (all but the `_0900_` ones and
//!   `binary`) compare as if the shorter string were padded with spaces, so
//!   trailing spaces never matter ('a' = 'a  '); NO PAD ones count them.
//!
//! # One function, three uses
//! [`Collation::sort_key`] turns a string into bytes whose bytewise order *is*
//! the collation's order: the weights as big-endian `u16`s (or the bytes, for
//! byte weightings), trailing spaces removed under PAD SPACE. That single
//! definition serves
//! - index and primary keys (`crate::types::encoding`): a key holds the sort key, so a
//!   UNIQUE index on a `_ci` column refuses 'A' after 'a' (1062) and an equality
//!   or range lookup finds every row the comparison accepts. The key no longer
//!   holds the original string, so nothing may decode strings from keys — rows
//!   keep every column (docs/format.md);
//! - hashing (GROUP BY, DISTINCT, COUNT(DISTINCT), hash joins): equal under the
//!   collation ⇔ equal sort keys;
//! - [`Collation::compare`], which walks the two weight sequences lazily
//!   without building the keys, and must agree with comparing sort keys (a test
//!   asserts that on generated strings).
//!
//! # Which collation an operation uses
//! MySQL's coercibility rules, as `crate::expr` applies them when binding: an
//! explicit `COLLATE` wins over a column's collation, which wins over a
//! literal's or parameter's (the connection's `collation_connection`); binary
//! strings win over character strings; two different collations at the same
//! level are error 1267. A comparison whose sides are not both strings (a
//! string with a number) is numeric, whatever the collations.
//!
//! # Differences from MySQL, on purpose or for now
//! - The DUCET is Unicode 13.0.0's (the table Debian ships), where MySQL's
//!   `_0900_` collations use 9.0.0: characters added after 9.0 get real weights
//!   rather than implicit ones; for characters in both versions the order is
//!   the same. `utf8mb4_unicode_ci` (UCA 4.0.0 in MySQL) uses the same table
//!   with 0xFFFD for every supplementary character, as MySQL does.
//! - Contractions (several code points weighing as one, used by a few scripts)
//!   are not applied; each code point is weighed alone. Canonically equivalent
//!   sequences (precomposed 'é' against 'e' + U+0301) are equal under the UCA
//!   collations because the combining mark is ignorable at the primary level.
//! - `latin1_swedish_ci` and the other collations of the non-UTF-8
//!   character sets (cp1251_general_ci, sjis_japanese_ci, ...) weigh like
//!   `utf8mb4_general_ci` (Swedish 'Å' sorts with 'A', not after 'Z'); their
//!   `_bin` collations order by the UTF-8 bytes, not by the bytes of the
//!   character set (the same order for latin1's letters, not for cp1251's
//!   or the multi-byte sets'). The values are UTF-8 whatever the column's
//!   character set (`crate::types::charset`).
//! - PAD SPACE is implemented by stripping trailing spaces, so a string ending
//!   in a character below the space (a tab) sorts after the shorter string,
//!   where MySQL would sort it before.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cmp::Ordering;
use std::sync::OnceLock;

/// A collation Canyon knows. See the module documentation for what each means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Collation {
    /// `binary`: the binary character set (BINARY, VARBINARY, BLOB); bytes, NO PAD.
    Binary,
    /// `utf8mb4_0900_ai_ci`, MySQL 8's default: UCA primary weights, NO PAD.
    Utf8mb4_0900AiCi,
    /// `utf8mb4_0900_bin`: bytes, NO PAD. Also what columns of tables created
    /// before Canyon knew collations are (their keys hold raw bytes).
    Utf8mb4_0900Bin,
    /// `utf8mb4_bin`: bytes, PAD SPACE.
    Utf8mb4Bin,
    /// `utf8mb4_general_ci`: one weight per character, PAD SPACE.
    Utf8mb4GeneralCi,
    /// `utf8mb4_unicode_ci`: UCA primary weights, PAD SPACE.
    Utf8mb4UnicodeCi,
    /// `utf8mb3_general_ci` (`utf8_general_ci`).
    Utf8mb3GeneralCi,
    /// `utf8mb3_bin`.
    Utf8mb3Bin,
    /// `utf8mb3_unicode_ci`.
    Utf8mb3UnicodeCi,
    /// `latin1_swedish_ci` (weighed as general_ci).
    Latin1SwedishCi,
    /// `latin1_general_ci` (weighed as general_ci).
    Latin1GeneralCi,
    /// `latin1_bin`.
    Latin1Bin,
    /// `ascii_general_ci`.
    AsciiGeneralCi,
    /// `ascii_bin`.
    AsciiBin,
    /// `latin2_general_ci` (weighed as general_ci).
    Latin2GeneralCi,
    /// `latin2_bin` (weighed as bytes).
    Latin2Bin,
    /// `cp1250_general_ci` (weighed as general_ci).
    Cp1250GeneralCi,
    /// `cp1250_bin` (weighed as bytes).
    Cp1250Bin,
    /// `cp1251_general_ci` (weighed as general_ci).
    Cp1251GeneralCi,
    /// `cp1251_bin` (weighed as bytes).
    Cp1251Bin,
    /// `koi8r_general_ci` (weighed as general_ci).
    Koi8rGeneralCi,
    /// `koi8r_bin` (weighed as bytes).
    Koi8rBin,
    /// `greek_general_ci` (weighed as general_ci).
    GreekGeneralCi,
    /// `greek_bin` (weighed as bytes).
    GreekBin,
    /// `hebrew_general_ci` (weighed as general_ci).
    HebrewGeneralCi,
    /// `hebrew_bin` (weighed as bytes).
    HebrewBin,
    /// `sjis_japanese_ci` (weighed as general_ci).
    SjisJapaneseCi,
    /// `sjis_bin` (weighed as bytes).
    SjisBin,
    /// `cp932_japanese_ci` (weighed as general_ci).
    Cp932JapaneseCi,
    /// `cp932_bin` (weighed as bytes).
    Cp932Bin,
    /// `ujis_japanese_ci` (weighed as general_ci).
    UjisJapaneseCi,
    /// `ujis_bin` (weighed as bytes).
    UjisBin,
    /// `gbk_chinese_ci` (weighed as general_ci).
    GbkChineseCi,
    /// `gbk_bin` (weighed as bytes).
    GbkBin,
    /// `big5_chinese_ci` (weighed as general_ci).
    Big5ChineseCi,
    /// `big5_bin` (weighed as bytes).
    Big5Bin,
    /// `euckr_korean_ci` (weighed as general_ci).
    EuckrKoreanCi,
    /// `euckr_bin` (weighed as bytes).
    EuckrBin,
}

/// How a collation turns a string into weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Weighting {
    /// The bytes themselves.
    Bytes,
    /// One weight per character: `general_ci`'s table.
    General,
    /// DUCET primary weights; `bmp_only` gives supplementary characters 0xFFFD.
    Uca { bmp_only: bool },
}

struct Info {
    name: &'static str,
    id: u16,
    charset: &'static str,
    weighting: Weighting,
    pad_space: bool,
}

const fn info(c: Collation) -> Info {
    use Collation::*;
    use Weighting::*;
    let (name, id, charset, weighting, pad_space) = match c {
        Binary => ("binary", 63, "binary", Bytes, false),
        Utf8mb4_0900AiCi => (
            "utf8mb4_0900_ai_ci",
            255,
            "utf8mb4",
            Uca { bmp_only: false },
            false,
        ),
        Utf8mb4_0900Bin => ("utf8mb4_0900_bin", 309, "utf8mb4", Bytes, false),
        Utf8mb4Bin => ("utf8mb4_bin", 46, "utf8mb4", Bytes, true),
        Utf8mb4GeneralCi => ("utf8mb4_general_ci", 45, "utf8mb4", General, true),
        Utf8mb4UnicodeCi => (
            "utf8mb4_unicode_ci",
            224,
            "utf8mb4",
            Uca { bmp_only: true },
            true,
        ),
        Utf8mb3GeneralCi => ("utf8mb3_general_ci", 33, "utf8mb3", General, true),
        Utf8mb3Bin => ("utf8mb3_bin", 83, "utf8mb3", Bytes, true),
        Utf8mb3UnicodeCi => (
            "utf8mb3_unicode_ci",
            192,
            "utf8mb3",
            Uca { bmp_only: true },
            true,
        ),
        Latin1SwedishCi => ("latin1_swedish_ci", 8, "latin1", General, true),
        Latin1GeneralCi => ("latin1_general_ci", 48, "latin1", General, true),
        Latin1Bin => ("latin1_bin", 47, "latin1", Bytes, true),
        AsciiGeneralCi => ("ascii_general_ci", 11, "ascii", General, true),
        AsciiBin => ("ascii_bin", 65, "ascii", Bytes, true),
        Latin2GeneralCi => ("latin2_general_ci", 9, "latin2", General, true),
        Latin2Bin => ("latin2_bin", 77, "latin2", Bytes, true),
        Cp1250GeneralCi => ("cp1250_general_ci", 26, "cp1250", General, true),
        Cp1250Bin => ("cp1250_bin", 66, "cp1250", Bytes, true),
        Cp1251GeneralCi => ("cp1251_general_ci", 51, "cp1251", General, true),
        Cp1251Bin => ("cp1251_bin", 50, "cp1251", Bytes, true),
        Koi8rGeneralCi => ("koi8r_general_ci", 7, "koi8r", General, true),
        Koi8rBin => ("koi8r_bin", 74, "koi8r", Bytes, true),
        GreekGeneralCi => ("greek_general_ci", 25, "greek", General, true),
        GreekBin => ("greek_bin", 70, "greek", Bytes, true),
        HebrewGeneralCi => ("hebrew_general_ci", 16, "hebrew", General, true),
        HebrewBin => ("hebrew_bin", 71, "hebrew", Bytes, true),
        SjisJapaneseCi => ("sjis_japanese_ci", 13, "sjis", General, true),
        SjisBin => ("sjis_bin", 88, "sjis", Bytes, true),
        Cp932JapaneseCi => ("cp932_japanese_ci", 95, "cp932", General, true),
        Cp932Bin => ("cp932_bin", 96, "cp932", Bytes, true),
        UjisJapaneseCi => ("ujis_japanese_ci", 12, "ujis", General, true),
        UjisBin => ("ujis_bin", 91, "ujis", Bytes, true),
        GbkChineseCi => ("gbk_chinese_ci", 28, "gbk", General, true),
        GbkBin => ("gbk_bin", 87, "gbk", Bytes, true),
        Big5ChineseCi => ("big5_chinese_ci", 1, "big5", General, true),
        Big5Bin => ("big5_bin", 84, "big5", Bytes, true),
        EuckrKoreanCi => ("euckr_korean_ci", 19, "euckr", General, true),
        EuckrBin => ("euckr_bin", 85, "euckr", Bytes, true),
    };
    Info {
        name,
        id,
        charset,
        weighting,
        pad_space,
    }
}

/// Character sets Canyon accepts: (name, default collation, description, maxlen).
pub const CHARSETS: &[(&str, Collation, &str, u32)] = &[
    ("utf8mb4", Collation::Utf8mb4_0900AiCi, "UTF-8 Unicode", 4),
    ("utf8mb3", Collation::Utf8mb3GeneralCi, "UTF-8 Unicode", 3),
    (
        "latin1",
        Collation::Latin1SwedishCi,
        "cp1252 West European",
        1,
    ),
    (
        "latin2",
        Collation::Latin2GeneralCi,
        "ISO 8859-2 Central European",
        1,
    ),
    (
        "cp1250",
        Collation::Cp1250GeneralCi,
        "Windows Central European",
        1,
    ),
    ("cp1251", Collation::Cp1251GeneralCi, "Windows Cyrillic", 1),
    (
        "koi8r",
        Collation::Koi8rGeneralCi,
        "KOI8-R Relcom Russian",
        1,
    ),
    ("greek", Collation::GreekGeneralCi, "ISO 8859-7 Greek", 1),
    ("hebrew", Collation::HebrewGeneralCi, "ISO 8859-8 Hebrew", 1),
    ("sjis", Collation::SjisJapaneseCi, "Shift-JIS Japanese", 2),
    (
        "cp932",
        Collation::Cp932JapaneseCi,
        "SJIS for Windows Japanese",
        2,
    ),
    ("ujis", Collation::UjisJapaneseCi, "EUC-JP Japanese", 3),
    ("gbk", Collation::GbkChineseCi, "GBK Simplified Chinese", 2),
    (
        "big5",
        Collation::Big5ChineseCi,
        "Big5 Traditional Chinese",
        2,
    ),
    ("euckr", Collation::EuckrKoreanCi, "EUC-KR Korean", 2),
    ("ascii", Collation::AsciiGeneralCi, "US ASCII", 1),
    ("binary", Collation::Binary, "Binary pseudo charset", 1),
];

impl Collation {
    /// Every collation, for SHOW COLLATION and information_schema.
    pub const ALL: [Collation; 38] = [
        Collation::Binary,
        Collation::Utf8mb4_0900AiCi,
        Collation::Utf8mb4_0900Bin,
        Collation::Utf8mb4Bin,
        Collation::Utf8mb4GeneralCi,
        Collation::Utf8mb4UnicodeCi,
        Collation::Utf8mb3GeneralCi,
        Collation::Utf8mb3Bin,
        Collation::Utf8mb3UnicodeCi,
        Collation::Latin1SwedishCi,
        Collation::Latin1GeneralCi,
        Collation::Latin1Bin,
        Collation::AsciiGeneralCi,
        Collation::AsciiBin,
        Collation::Latin2GeneralCi,
        Collation::Latin2Bin,
        Collation::Cp1250GeneralCi,
        Collation::Cp1250Bin,
        Collation::Cp1251GeneralCi,
        Collation::Cp1251Bin,
        Collation::Koi8rGeneralCi,
        Collation::Koi8rBin,
        Collation::GreekGeneralCi,
        Collation::GreekBin,
        Collation::HebrewGeneralCi,
        Collation::HebrewBin,
        Collation::SjisJapaneseCi,
        Collation::SjisBin,
        Collation::Cp932JapaneseCi,
        Collation::Cp932Bin,
        Collation::UjisJapaneseCi,
        Collation::UjisBin,
        Collation::GbkChineseCi,
        Collation::GbkBin,
        Collation::Big5ChineseCi,
        Collation::Big5Bin,
        Collation::EuckrKoreanCi,
        Collation::EuckrBin,
    ];

    /// The server's default collation for character strings (MySQL 8's).
    pub const DEFAULT: Collation = Collation::Utf8mb4_0900AiCi;

    /// Its name, as SHOW COLLATION prints it.
    pub fn name(self) -> &'static str {
        info(self).name
    }

    /// Its id (the number the protocol's column definitions and handshake carry).
    pub fn id(self) -> u16 {
        info(self).id
    }

    /// Its character set's name.
    pub fn charset(self) -> &'static str {
        info(self).charset
    }

    /// Its character set, for conversion (`crate::types::charset`).
    pub fn character_set(self) -> crate::types::charset::Charset {
        crate::types::charset::Charset::from_name(self.charset())
            .expect("every collation's character set is a supported Charset")
    }

    /// PAD SPACE (trailing spaces ignored) rather than NO PAD.
    pub fn pad_space(self) -> bool {
        info(self).pad_space
    }

    /// Whether it is its character set's default.
    pub fn is_default(self) -> bool {
        CHARSETS.iter().any(|(_, c, _, _)| *c == self)
    }

    /// Whether strings compare as their bytes with no padding: then comparing,
    /// hashing and keying need no weights at all.
    pub fn is_bytewise(self) -> bool {
        let i = info(self);
        i.weighting == Weighting::Bytes && !i.pad_space
    }

    /// Whether it is case-insensitive (the `_ci` ones).
    pub fn is_ci(self) -> bool {
        info(self).weighting != Weighting::Bytes
    }

    /// The collation named `name` (case-insensitive; `utf8_` means `utf8mb3_`).
    pub fn from_name(name: &str) -> Option<Collation> {
        let lower = name.trim_matches('`').to_ascii_lowercase();
        let lower = match lower.strip_prefix("utf8_") {
            Some(rest) => format!("utf8mb3_{rest}"),
            None => lower,
        };
        Collation::ALL.into_iter().find(|c| c.name() == lower)
    }

    /// The collation with protocol id `id`.
    pub fn from_id(id: u16) -> Option<Collation> {
        Collation::ALL.into_iter().find(|c| c.id() == id)
    }

    /// The default collation of character set `charset` (`utf8` is utf8mb3).
    pub fn for_charset(charset: &str) -> Option<Collation> {
        let lower = charset.trim_matches('`').to_ascii_lowercase();
        let lower = if lower == "utf8" {
            "utf8mb3".into()
        } else {
            lower
        };
        CHARSETS
            .iter()
            .find(|(n, ..)| *n == lower)
            .map(|(_, c, ..)| *c)
    }

    /// Resolves a `CHARACTER SET cs [COLLATE co]` pair, either part optional,
    /// falling back to `default`: 1115 for an unknown character set, 1273 for
    /// an unknown collation, 1253 when the collation is not of the set.
    pub fn resolve(
        charset: Option<&str>,
        collation: Option<&str>,
        default: Collation,
    ) -> canyon_common::Result<Collation> {
        use canyon_common::Error;
        let cs = match charset {
            Some(cs) => Some(
                Collation::for_charset(cs).ok_or_else(|| Error::UnknownCharset(cs.to_string()))?,
            ),
            None => None,
        };
        match collation {
            Some(name) => {
                let c = Collation::from_name(name)
                    .ok_or_else(|| Error::UnknownCollation(name.to_ascii_lowercase()))?;
                if let Some(cs) = cs {
                    if cs.charset() != c.charset() {
                        return Err(Error::CollationCharsetMismatch {
                            collation: c.name().to_string(),
                            charset: cs.charset().to_string(),
                        });
                    }
                }
                Ok(c)
            }
            None => Ok(cs.unwrap_or(default)),
        }
    }

    /// Appends the sort key of `s`: bytes whose bytewise order and equality are
    /// this collation's. See the module documentation.
    pub fn sort_key(self, s: &[u8], out: &mut Vec<u8>) {
        let i = info(self);
        let s = if i.pad_space { trim_spaces(s) } else { s };
        match i.weighting {
            Weighting::Bytes => out.extend_from_slice(s),
            w => for_each_weight(w, s, &mut |x| out.extend_from_slice(&x.to_be_bytes())),
        }
    }

    /// Compares two strings under this collation. Agrees with comparing their
    /// sort keys, without building them.
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        let i = info(self);
        let (a, b) = if i.pad_space {
            (trim_spaces(a), trim_spaces(b))
        } else {
            (a, b)
        };
        match i.weighting {
            Weighting::Bytes => a.cmp(b),
            w => match compare_ascii(ascii_weights(w), a, b) {
                Some(o) => o,
                None => {
                    let (mut wa, mut wb) = (Vec::with_capacity(32), Vec::with_capacity(32));
                    for_each_weight(w, a, &mut |x| wa.push(x));
                    for_each_weight(w, b, &mut |x| wb.push(x));
                    wa.cmp(&wb)
                }
            },
        }
    }

    /// Compares two strings as STRCMP does under this collation: a PAD SPACE
    /// collation pads the shorter with spaces, so a character that sorts
    /// below the space makes a string less than its prefix (`'a\0'` <
    /// `'a'`, `'a\t'` < `'a '`). [`Collation::compare`], which agrees with
    /// the sort keys, reads both trimmed instead and puts the prefix first;
    /// the two differ only there.
    pub fn compare_padded(self, a: &[u8], b: &[u8]) -> Ordering {
        let i = info(self);
        if !i.pad_space {
            return self.compare(a, b);
        }
        let weights = |s: &[u8]| -> Vec<u16> {
            let mut out = Vec::with_capacity(s.len());
            match i.weighting {
                Weighting::Bytes => out.extend(s.iter().map(|&b| u16::from(b))),
                w => for_each_weight(w, s, &mut |x| out.push(x)),
            }
            out
        };
        let (wa, wb) = (weights(trim_spaces(a)), weights(trim_spaces(b)));
        let space = weights(b" ").first().copied().unwrap_or(u16::from(b' '));
        let n = wa.len().min(wb.len());
        match wa[..n].cmp(&wb[..n]) {
            Ordering::Equal => {}
            o => return o,
        }
        // The longer one's rest against the other's padding.
        let rest = |w: &[u16]| w[n..].iter().copied().find(|x| *x != space);
        match (rest(&wa), rest(&wb)) {
            (Some(x), _) => x.cmp(&space),
            (_, Some(y)) => space.cmp(&y),
            _ => Ordering::Equal,
        }
    }

    /// Whether two strings are equal under this collation.
    pub fn equal(self, a: &[u8], b: &[u8]) -> bool {
        if self.is_bytewise() {
            return a == b;
        }
        self.compare(a, b) == Ordering::Equal
    }

    /// MySQL LIKE under this collation: `%` any run, `_` one character, `esc`
    /// escapes; characters match when their weights are equal (so `_ci`
    /// collations match case-insensitively). No padding: LIKE counts
    /// trailing spaces under every collation, as in MySQL.
    pub fn like(self, s: &[u8], p: &[u8], esc: u8) -> bool {
        let w = info(self).weighting;
        let s: Vec<char> = String::from_utf8_lossy(s).chars().collect();
        let p: Vec<char> = String::from_utf8_lossy(p).chars().collect();
        match w {
            Weighting::Bytes => like_chars(&s, &p, esc as char, &|a, b| a == b),
            w => {
                let weights = |c: char| {
                    let mut v = Vec::with_capacity(2);
                    char_weights(w, c as u32, &mut |x| v.push(x));
                    v
                };
                // Characters ignorable at the primary level (combining marks
                // under the UCA) match nothing and are skipped, as the
                // weight comparison skips them.
                let s: Vec<char> = s.into_iter().filter(|c| !weights(*c).is_empty()).collect();
                like_chars(&s, &p, esc as char, &|a, b| {
                    a == b || weights(a) == weights(b)
                })
            }
        }
    }
}

impl Serialize for Collation {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Collation {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Collation, D::Error> {
        let name = String::deserialize(d)?;
        Collation::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown collation {name}")))
    }
}

fn trim_spaces(s: &[u8]) -> &[u8] {
    let end = s.iter().rposition(|c| *c != b' ').map_or(0, |p| p + 1);
    &s[..end]
}

/// Calls `f` with each weight of `s` (non-byte weightings). Invalid UTF-8
/// bytes weigh 0xFFFF then the byte, after every character.
fn for_each_weight(w: Weighting, s: &[u8], f: &mut dyn FnMut(u16)) {
    for chunk in s.utf8_chunks() {
        for c in chunk.valid().chars() {
            char_weights(w, c as u32, f);
        }
        for &b in chunk.invalid() {
            f(0xFFFF);
            f(b as u16);
        }
    }
}

/// The weights of one character (none for a character ignorable at the
/// primary level).
fn char_weights(w: Weighting, c: u32, f: &mut dyn FnMut(u16)) {
    match w {
        Weighting::Bytes => unreachable!("byte weightings have no character weights"),
        Weighting::General => f(general_weight(c)),
        Weighting::Uca { bmp_only } => {
            if bmp_only && c > 0xFFFF {
                f(0xFFFD)
            } else {
                uca_weights(c, f)
            }
        }
    }
}

/// Compares two strings by the ASCII weight table `t` as long as both are
/// ASCII, stopping at the first difference (sysbench's `ORDER BY c` differs in
/// the first characters); `None` when a non-ASCII byte is met before the
/// order is decided (then the caller weighs the whole strings).
fn compare_ascii(t: &[u16; 128], a: &[u8], b: &[u8]) -> Option<Ordering> {
    let (mut i, mut j) = (0, 0);
    loop {
        // The next non-ignorable weight of each side.
        let mut wa = None;
        while i < a.len() {
            let c = a[i];
            if c >= 0x80 {
                return None;
            }
            i += 1;
            if t[c as usize] != 0 {
                wa = Some(t[c as usize]);
                break;
            }
        }
        let mut wb = None;
        while j < b.len() {
            let c = b[j];
            if c >= 0x80 {
                return None;
            }
            j += 1;
            if t[c as usize] != 0 {
                wb = Some(t[c as usize]);
                break;
            }
        }
        match (wa, wb) {
            (None, None) => return Some(Ordering::Equal),
            (x, y) if x != y => return Some(x.cmp(&y)),
            _ => {}
        }
    }
}

/// The weight of each ASCII character under `w` (0: ignorable), for the
/// allocation-free comparison of ASCII strings.
fn ascii_weights(w: Weighting) -> &'static [u16; 128] {
    static GENERAL: OnceLock<[u16; 128]> = OnceLock::new();
    static UCA: OnceLock<[u16; 128]> = OnceLock::new();
    let build = |w: Weighting| {
        let mut t = [0u16; 128];
        for (c, slot) in t.iter_mut().enumerate() {
            let mut n = 0;
            char_weights(w, c as u32, &mut |x| {
                n += 1;
                *slot = x;
            });
            assert!(n <= 1, "ASCII {c} has {n} weights");
        }
        t
    };
    match w {
        Weighting::General => GENERAL.get_or_init(|| build(Weighting::General)),
        // The table is the same with or without `bmp_only`.
        _ => UCA.get_or_init(|| build(Weighting::Uca { bmp_only: false })),
    }
}

// ----------------------------------------------------------------------------------
// utf8mb4_general_ci
// ----------------------------------------------------------------------------------

/// general_ci's weight of code point `c`: 0xFFFD above the BMP; otherwise the
/// upper case of the first character of its canonical decomposition ('á' →
/// 'a' → 'A'), which reproduces MySQL's table for Latin, Greek and Cyrillic.
fn general_weight(c: u32) -> u16 {
    static TABLE: OnceLock<Vec<u16>> = OnceLock::new();
    if c > 0xFFFF {
        return 0xFFFD;
    }
    let table = TABLE.get_or_init(|| (0..=0xFFFFu32).map(general_weight_of).collect());
    table[c as usize]
}

fn general_weight_of(c: u32) -> u16 {
    use unicode_normalization::char::decompose_canonical;
    let Some(ch) = char::from_u32(c) else {
        return c as u16; // a surrogate: never in valid UTF-8
    };
    // MySQL's table special cases (its "sort" column).
    match ch {
        'ß' => return 'S' as u16,
        'ÿ' | 'Ÿ' => return 'Y' as u16,
        _ => {}
    }
    let mut base = None;
    decompose_canonical(ch, |d| {
        if base.is_none() {
            base = Some(d);
        }
    });
    let base = base.unwrap_or(ch);
    let mut up = base.to_uppercase();
    match (up.next(), up.next()) {
        (Some(u), None) if (u as u32) <= 0xFFFF => u as u16,
        _ => base as u32 as u16,
    }
}

// ----------------------------------------------------------------------------------
// UCA (DUCET primary weights)
// ----------------------------------------------------------------------------------

/// The DUCET's primary weights, generated by scripts/gen_ducet.py (format
/// there).
static DUCET_BIN: &[u8] = include_bytes!("../../data/ducet-primary.bin");

struct Ducet {
    /// Code points with a table entry, ascending.
    cps: Vec<u32>,
    /// For each: (start in `weights`, count).
    spans: Vec<(u32, u8)>,
    weights: Vec<u16>,
    /// Direct index for code points below `DIRECT`: index into cps, or
    /// u32::MAX when there is no entry.
    direct: Vec<u32>,
}

const DIRECT: u32 = 0x3400;

fn ducet() -> &'static Ducet {
    static D: OnceLock<Ducet> = OnceLock::new();
    D.get_or_init(|| {
        let mut d = Ducet {
            cps: Vec::with_capacity(32_768),
            spans: Vec::with_capacity(32_768),
            weights: Vec::with_capacity(40_000),
            direct: vec![u32::MAX; DIRECT as usize],
        };
        let b = DUCET_BIN;
        let mut i = 0;
        while i + 5 <= b.len() {
            let cp = u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
            let n = b[i + 4];
            i += 5;
            let start = d.weights.len() as u32;
            for _ in 0..n {
                d.weights.push(u16::from_le_bytes([b[i], b[i + 1]]));
                i += 2;
            }
            debug_assert!(d.cps.last().is_none_or(|p| *p < cp), "DUCET table unsorted");
            if cp < DIRECT {
                d.direct[cp as usize] = d.cps.len() as u32;
            }
            d.cps.push(cp);
            d.spans.push((start, n));
        }
        d
    })
}

fn uca_weights(c: u32, f: &mut dyn FnMut(u16)) {
    let d = ducet();
    let idx = if c < DIRECT {
        Some(d.direct[c as usize]).filter(|i| *i != u32::MAX)
    } else {
        d.cps.binary_search(&c).ok().map(|i| i as u32)
    };
    if let Some(i) = idx {
        let (start, n) = d.spans[i as usize];
        for w in &d.weights[start as usize..start as usize + n as usize] {
            f(*w);
        }
        return;
    }
    // Hangul syllables are not in the table: they weigh as their jamo.
    if (0xAC00..=0xD7A3).contains(&c) {
        let s = c - 0xAC00;
        let (l, v, t) = (0x1100 + s / 588, 0x1161 + (s % 588) / 28, 0x11A7 + s % 28);
        uca_weights(l, f);
        uca_weights(v, f);
        if t != 0x11A7 {
            uca_weights(t, f);
        }
        return;
    }
    let (a, b) = implicit_weights(c);
    f(a);
    f(b);
}

/// The UCA's implicit weights for a code point without a table entry
/// (UTS #10, section 10.1.3, with the ranges of allkeys 13.0.0).
fn implicit_weights(c: u32) -> (u16, u16) {
    const SIEVES: &[(u32, u32, u16)] = &[
        (0x17000, 0x18AFF, 0xFB00), // Tangut
        (0x18D00, 0x18D8F, 0xFB00), // Tangut supplement
        (0x1B170, 0x1B2FF, 0xFB01), // Nushu
        (0x18B00, 0x18CFF, 0xFB02), // Khitan small script
    ];
    for &(lo, hi, base) in SIEVES {
        if (lo..=hi).contains(&c) {
            let off = if base == 0xFB00 { 0x17000 } else { lo };
            return (base, ((c - off) as u16) | 0x8000);
        }
    }
    const CORE_COMPAT: &[u32] = &[
        0xFA0E, 0xFA0F, 0xFA11, 0xFA13, 0xFA14, 0xFA1F, 0xFA21, 0xFA23, 0xFA24, 0xFA27, 0xFA28,
        0xFA29,
    ];
    const OTHER_HAN: &[(u32, u32)] = &[
        (0x3400, 0x4DBF),
        (0x20000, 0x2A6DF),
        (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F),
        (0x2B820, 0x2CEAF),
        (0x2CEB0, 0x2EBEF),
        (0x30000, 0x3134F),
    ];
    let base: u32 = if (0x4E00..=0x9FFF).contains(&c) || CORE_COMPAT.contains(&c) {
        0xFB40
    } else if OTHER_HAN.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) {
        0xFB80
    } else {
        0xFBC0
    };
    ((base + (c >> 15)) as u16, ((c & 0x7FFF) | 0x8000) as u16)
}

// ----------------------------------------------------------------------------------
// LIKE
// ----------------------------------------------------------------------------------

/// LIKE over characters with `eq` deciding whether a pattern character
/// matches a string character. Iterative, backtracking over the last `%`.
fn like_chars(s: &[char], p: &[char], esc: char, eq: &dyn Fn(char, char) -> bool) -> bool {
    let (mut si, mut pi) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() {
            let c = p[pi];
            if c == '%' {
                star = Some((pi, si));
                pi += 1;
                continue;
            }
            let (lit, adv) = if c == esc && pi + 1 < p.len() {
                (Some(p[pi + 1]), 2)
            } else if c == '_' {
                (None, 1)
            } else {
                (Some(c), 1)
            };
            if lit.is_none_or(|l| eq(l, s[si])) {
                si += 1;
                pi += adv;
                continue;
            }
        }
        match star {
            Some((sp, ss)) => {
                pi = sp + 1;
                si = ss + 1;
                star = Some((sp, ss + 1));
            }
            None => return false,
        }
    }
    while pi < p.len() && p[pi] == '%' {
        pi += 1;
    }
    pi == p.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Collation::*;

    fn key(c: Collation, s: &str) -> Vec<u8> {
        let mut k = Vec::new();
        c.sort_key(s.as_bytes(), &mut k);
        k
    }

    #[test]
    fn names_ids_and_charsets_round_trip() {
        for c in Collation::ALL {
            assert_eq!(Collation::from_name(c.name()), Some(c));
            assert_eq!(Collation::from_id(c.id()), Some(c));
            assert!(CHARSETS.iter().any(|(n, ..)| *n == c.charset()));
        }
        assert_eq!(
            Collation::from_name("UTF8_GENERAL_CI"),
            Some(Utf8mb3GeneralCi)
        );
        assert_eq!(Collation::for_charset("utf8mb4"), Some(Utf8mb4_0900AiCi));
        assert_eq!(Collation::for_charset("utf8"), Some(Utf8mb3GeneralCi));
        assert_eq!(Collation::from_name("klingon_ci"), None);
        assert!(Collation::resolve(Some("latin1"), Some("utf8mb4_bin"), DEFAULT).is_err());
        assert_eq!(
            Collation::resolve(Some("utf8mb4"), None, Binary).ok(),
            Some(Utf8mb4_0900AiCi)
        );
    }

    const DEFAULT: Collation = Collation::DEFAULT;

    #[test]
    fn ai_ci_is_case_and_accent_insensitive_and_no_pad() {
        let c = Utf8mb4_0900AiCi;
        assert!(c.equal(b"abc", b"ABC"));
        assert!(c.equal("résumé".as_bytes(), b"RESUME"));
        assert!(c.equal("Straße".as_bytes(), b"strasse"));
        assert!(c.equal("Å".as_bytes(), b"a"));
        // A combining acute accent is ignorable at the primary level.
        assert!(c.equal("e\u{301}".as_bytes(), "é".as_bytes()));
        // NO PAD: trailing spaces count.
        assert!(!c.equal(b"a", b"a "));
        assert_eq!(c.compare(b"a", b"B"), Ordering::Less);
        assert_eq!(c.compare(b"Z", b"a"), Ordering::Greater);
        // DUCET order: punctuation < digits < letters.
        assert_eq!(c.compare(b"_", b"0"), Ordering::Less);
        assert_eq!(c.compare(b"9", b"a"), Ordering::Less);
        // Emoji differ from each other under 0900 ...
        assert!(!c.equal("😀".as_bytes(), "😃".as_bytes()));
        // ... and Hangul syllables weigh as their jamo, in order.
        assert_eq!(c.compare("가".as_bytes(), "나".as_bytes()), Ordering::Less);
        // Han characters take implicit weights in code point order.
        assert_eq!(c.compare("一".as_bytes(), "丁".as_bytes()), Ordering::Less);
    }

    #[test]
    fn general_ci_is_one_weight_per_character_with_pad_space() {
        let c = Utf8mb4GeneralCi;
        assert!(c.equal(b"abc", b"ABC"));
        assert!(c.equal("é".as_bytes(), b"E"));
        assert!(c.equal("ß".as_bytes(), b"s"));
        assert!(!c.equal("ß".as_bytes(), b"ss"));
        assert!(c.equal(b"a", b"a   "));
        // MySQL's known quirk: every supplementary character weighs 0xFFFD.
        assert!(c.equal("😀".as_bytes(), "😃".as_bytes()));
        assert!(Utf8mb4UnicodeCi.equal("😀".as_bytes(), "😃".as_bytes()));
        assert!(Utf8mb4UnicodeCi.equal("Straße".as_bytes(), b"STRASSE "));
    }

    #[test]
    fn bin_collations_are_bytes() {
        assert!(!Utf8mb4Bin.equal(b"a", b"A"));
        assert!(Utf8mb4Bin.equal(b"a", b"a "));
        assert!(!Utf8mb4_0900Bin.equal(b"a", b"a "));
        assert!(!Binary.equal(b"a", b"a "));
        assert!(Binary.is_bytewise() && Utf8mb4_0900Bin.is_bytewise());
        assert!(!Utf8mb4Bin.is_bytewise());
    }

    #[test]
    fn compare_agrees_with_sort_keys() {
        // Strings over an alphabet that exercises case, accents, expansions,
        // spaces, punctuation, emoji, Hangul and invalid bytes.
        let alphabet: &[&[u8]] = &[
            b"a",
            b"A",
            "á".as_bytes(),
            "ß".as_bytes(),
            b"s",
            b" ",
            b"-",
            b"0",
            "😀".as_bytes(),
            "가".as_bytes(),
            b"\xff",
            b"z",
        ];
        let mut strings: Vec<Vec<u8>> = vec![Vec::new()];
        for a in alphabet {
            for b in alphabet {
                strings.push([*a, *b].concat());
                for c in alphabet.iter().step_by(3) {
                    strings.push([*a, *b, *c].concat());
                }
            }
        }
        for coll in Collation::ALL {
            for x in &strings {
                for y in strings.iter().step_by(7) {
                    let (mut kx, mut ky) = (Vec::new(), Vec::new());
                    coll.sort_key(x, &mut kx);
                    coll.sort_key(y, &mut ky);
                    assert_eq!(
                        coll.compare(x, y),
                        kx.cmp(&ky),
                        "{} {x:?} {y:?}",
                        coll.name()
                    );
                }
            }
        }
    }

    #[test]
    fn sort_keys_order_like_mysql() {
        let mut words = vec!["b", "A", "a", "Á", "ab", "B", "_x", "10", "9"];
        words.sort_by_key(|w| key(Utf8mb4_0900AiCi, w));
        // Equal keys keep input order (stable sort): A a Á.
        assert_eq!(words, ["_x", "10", "9", "A", "a", "Á", "ab", "b", "B"]);
    }

    #[test]
    fn like_follows_the_collation() {
        assert!(Utf8mb4_0900AiCi.like(b"Hello", b"h%O", b'\\'));
        assert!(Utf8mb4_0900AiCi.like("Émile".as_bytes(), b"emi_e", b'\\'));
        assert!(!Utf8mb4_0900Bin.like(b"Hello", b"h%", b'\\'));
        assert!(Utf8mb4GeneralCi.like(b"50%", b"50\\%", b'\\'));
        assert!(!Utf8mb4GeneralCi.like(b"50x", b"50\\%", b'\\'));
        assert!(Binary.like(b"abc", b"a_c", b'\\'));
    }
}
