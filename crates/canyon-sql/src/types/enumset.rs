//! ENUM and SET column types: their member lists, how a value is stored into
//! one, and how it reads in a numeric context.
//!
//! # What MySQL does
//! `ENUM('a','b','c')` holds one of its members (or NULL, or the *error
//! value* `''`, which non-strict mode stores for a value that is not a
//! member); `SET('a','b','c')` holds any subset of its members. MySQL keeps
//! an ENUM as its member's 1-based index (0 for `''`) and a SET as a bitmask
//! (member `i` is bit `i`), and a value is read both ways: as the member's
//! string in a string context (results, comparison with a string, string
//! functions, MIN / MAX) and as the number in a numeric one (`c + 0`,
//! comparison with a number, `ORDER BY c`, which sorts by index).
//! Storing accepts a string (matched under the column's collation, trailing
//! spaces removed; a SET's `'a,b'` lists members in any order, duplicates
//! allowed, and is normalised to declaration order) or a number (the index or
//! the bitmask). Anything else is 1265 "Data truncated" — an error under
//! strict mode, a warning and `''` (ENUM) or the members that did match
//! (SET) otherwise.
//!
//! # How Canyon holds them
//! A value is held, computed with *and stored* as its canonical text: the
//! member as declared (ENUM), or the members in declaration order joined by
//! `,` (SET). That is the string reading, so results, comparisons with
//! strings, LIKE, string functions, MIN / MAX, GROUP BY and the keys of an
//! index on the column (sort keys under the column's collation) all work
//! unchanged, and the row and key formats get nothing new.
//! The numeric reading is made by the binder: where an ENUM / SET column
//! meets arithmetic, a comparison with a number, or ORDER BY, it wraps the
//! column in `Func::EnumIndex` (`crate::expr::functions`) / `SetMask`, which map the
//! canonical text back to the index or bitmask through the member list.
//!
//! The member list is part of the type: [`SqlType::Enum`] and
//! [`SqlType::Set`] carry a `&'static` [`Members`], interned (each distinct
//! list, with its collation, is allocated once per process and never freed)
//! so that `SqlType` stays `Copy`. The catalog stores it as JSON like any
//! other part of the type, and reading it back interns it again.
//!
//! # Invariants
//! 1. Members are stored with trailing spaces removed (as MySQL does when
//!    the table is created) and are pairwise distinct under the collation
//!    (1291 otherwise); an ENUM has at most 65,535, a SET at most 64
//!    members, and no SET member contains a comma.
//! 2. A stored ENUM value is a member's exact text or `''`; a stored SET
//!    value is members' exact texts, in declaration order, comma-joined.
//!
//! # Differences from MySQL
//! - Storage is the text, not the index: an index on an ENUM column is
//!   ordered by text, so `ORDER BY c` sorts rather than reading the index.
//! - An ENUM declaring `''` as a member cannot tell that member from the
//!   error value (both are the text `''`): `c + 0` gives the member's index
//!   for both, where MySQL gives 0 for the error value.
//!
//! [`SqlType::Enum`]: crate::types::SqlType::Enum
//! [`SqlType::Set`]: crate::types::SqlType::Set

use crate::types::collation::Collation;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

/// Most members an ENUM may declare (MySQL: 65,535).
pub const MAX_ENUM_MEMBERS: usize = 65_535;
/// Most members a SET may declare (MySQL: 64, one bit each).
pub const MAX_SET_MEMBERS: usize = 64;

/// The member list of an ENUM or SET column, with the collation members are
/// matched under.
#[derive(Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Members {
    /// The members, in declaration order, trailing spaces removed.
    pub values: Vec<String>,
    /// The column's collation: how an input string is matched to a member.
    pub collation: Collation,
}

/// Most bytes of member lists a running server interns from DDL
/// ([`intern_bounded`]): lists are never freed, so without a bound a client
/// creating (or failing to create) tables with ever-new member lists could
/// grow the process without limit. 64 MiB is some thousands of ordinary
/// schemas' worth of lists; a restart starts the count again from the
/// catalog's lists.
pub const INTERNED_BYTES_LIMIT: usize = 64 << 20;

/// Bytes interned so far (an estimate: the members' text and their
/// `String`s).
static INTERNED_BYTES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The interned lists (see [`intern`]).
fn interned() -> std::sync::MutexGuard<'static, HashSet<&'static Members>> {
    static TABLE: OnceLock<Mutex<HashSet<&'static Members>>> = OnceLock::new();
    TABLE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Interns a member list: the same list and collation always give the same
/// `&'static` (allocated once per process and never freed: see
/// [`intern_bounded`] for the bound DDL is held to). The catalog's lists
/// are read through here at start-up, unbounded: what is stored must load.
pub fn intern(values: Vec<String>, collation: Collation) -> &'static Members {
    let m = Members { values, collation };
    let mut table = interned();
    if let Some(found) = table.get(&m) {
        return found;
    }
    INTERNED_BYTES.fetch_add(list_bytes(&m.values), std::sync::atomic::Ordering::Relaxed);
    let leaked: &'static Members = Box::leak(Box::new(m));
    table.insert(leaked);
    leaked
}

/// [`intern`] for a list a statement declares: 1037 when interning it
/// would take the process past [`INTERNED_BYTES_LIMIT`] (a list already
/// interned costs nothing and is always given).
pub fn intern_bounded(values: Vec<String>, collation: Collation) -> Result<&'static Members> {
    let needed = list_bytes(&values);
    let m = Members { values, collation };
    let mut table = interned();
    if let Some(found) = table.get(&m) {
        return Ok(found);
    }
    if INTERNED_BYTES.load(std::sync::atomic::Ordering::Relaxed) + needed > INTERNED_BYTES_LIMIT {
        return Err(Error::OutOfMemory {
            needed,
            limit: "ENUM / SET member lists (64 MiB per process)",
        });
    }
    INTERNED_BYTES.fetch_add(needed, std::sync::atomic::Ordering::Relaxed);
    let leaked: &'static Members = Box::leak(Box::new(m));
    table.insert(leaked);
    Ok(leaked)
}

fn list_bytes(values: &[String]) -> usize {
    values
        .iter()
        .map(|v| v.len() + std::mem::size_of::<String>())
        .sum::<usize>()
        + std::mem::size_of::<Members>()
}

/// Serde's reading of an interned member list (used by `SqlType`'s derive).
pub fn deserialize_members<'de, D: Deserializer<'de>>(d: D) -> Result<&'static Members, D::Error> {
    let m = Members::deserialize(d)?;
    Ok(intern(m.values, m.collation))
}

/// Which of the two types a member list belongs to (for messages and names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// ENUM: one member.
    Enum,
    /// SET: a subset.
    Set,
}

impl Kind {
    fn keyword(self) -> &'static str {
        match self {
            Kind::Enum => "ENUM",
            Kind::Set => "SET",
        }
    }
}

/// Removes trailing spaces, as MySQL does to members and to input.
fn trim_end_spaces(s: &[u8]) -> &[u8] {
    let end = s.iter().rposition(|c| *c != b' ').map_or(0, |p| p + 1);
    &s[..end]
}

/// Checks a declared member list for `column` (invariant 1): the members are
/// trimmed, and duplicates are 1291, too many members 1097 (SET) or 3504
/// (ENUM, MySQL 8's ER_TOO_BIG_ENUM; MariaDB says 1097 for both), a comma in
/// a SET member 1367.
pub fn check_members(kind: Kind, column: &str, values: &mut [String]) -> Result<()> {
    for v in values.iter_mut() {
        let t = trim_end_spaces(v.as_bytes()).len();
        v.truncate(t);
    }
    match kind {
        Kind::Enum if values.len() > MAX_ENUM_MEMBERS => {
            return Err(Error::Sql {
                code: 3504,
                sqlstate: *b"HY000",
                message: format!("Too many enumeration values for column {column}."),
            })
        }
        Kind::Set if values.len() > MAX_SET_MEMBERS => {
            return Err(Error::Sql {
                code: 1097,
                sqlstate: *b"HY000",
                message: format!("Too many strings for column {column} and SET"),
            })
        }
        _ => {}
    }
    if kind == Kind::Set {
        if let Some(bad) = values.iter().find(|v| v.contains(',')) {
            return Err(Error::Sql {
                code: 1367,
                sqlstate: *b"22007",
                message: format!("Illegal set '{bad}' value found during parsing"),
            });
        }
    }
    Ok(())
}

/// Two members equal under the collation (MySQL compares them under the
/// column's collation: `ENUM('a','A')` is a duplicate under a `_ci`
/// collation and allowed under `_bin`): strict `sql_mode` refuses the first
/// with 1291; otherwise each member equal to a later one is note 1291
/// (`warn`, the code with [`crate::types::warning::NOTE`]) and the list is kept
/// as declared, as MySQL 8 and MariaDB keep it (a value names the first of
/// equal members).
pub fn check_distinct(
    kind: Kind,
    column: &str,
    m: &Members,
    strict: bool,
    warn: &mut dyn FnMut(u16, String),
) -> Result<()> {
    // A map of sort keys to the last member with each: lists may have
    // 65,535 members.
    let mut keys = Vec::with_capacity(m.values.len());
    let mut last = std::collections::HashMap::with_capacity(m.values.len());
    for (i, v) in m.values.iter().enumerate() {
        let mut key = Vec::with_capacity(v.len());
        m.collation.sort_key(v.as_bytes(), &mut key);
        last.insert(key.clone(), i);
        keys.push(key);
    }
    for (i, key) in keys.iter().enumerate() {
        if last[key] == i {
            continue;
        }
        let message = format!(
            "Column '{column}' has duplicated value '{}' in {}",
            m.values[i],
            kind.keyword()
        );
        if strict {
            return Err(Error::Sql {
                code: 1291,
                sqlstate: *b"HY000",
                message,
            });
        }
        warn(crate::types::warning::NOTE | 1291, message);
    }
    Ok(())
}

impl Members {
    /// The 1-based position of the member equal to `s` under the collation.
    fn position(&self, s: &[u8]) -> Option<usize> {
        let s = trim_end_spaces(s);
        // The first member equal under the collation (members equal to
        // each other, kept outside strict mode, name the first: 'X' for
        // ENUM('x','y','X') is 1); the exact text is the cheap test.
        self.values
            .iter()
            .position(|m| m.as_bytes() == s || self.collation.equal(m.as_bytes(), s))
            .map(|p| p + 1)
    }

    /// The 1-based declared position of the member equal to `s` under the
    /// collation (trailing spaces ignored).
    pub fn member_position(&self, s: &[u8]) -> Option<usize> {
        self.position(s)
    }

    /// The bitmask of every member.
    fn all_bits(&self) -> u64 {
        match self.values.len() {
            64.. => u64::MAX,
            n => (1u64 << n) - 1,
        }
    }

    /// The canonical text of the SET value with bitmask `mask`.
    fn set_text(&self, mask: u64) -> String {
        let mut out = String::new();
        for (i, m) in self.values.iter().enumerate().take(64) {
            if mask >> i & 1 == 1 {
                if !out.is_empty() {
                    out.push(',');
                }
                out.push_str(m);
            }
        }
        out
    }

    /// The type as SHOW CREATE TABLE and information_schema print it:
    /// `enum('a','b')`, members quoted as MySQL's `append_unescaped` does
    /// (a quote doubled; backslash, NUL, newline, carriage return and ^Z
    /// backslash-escaped).
    pub fn sql_name(&self, kind: Kind) -> String {
        let mut out = String::from(match kind {
            Kind::Enum => "enum(",
            Kind::Set => "set(",
        });
        for (i, m) in self.values.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('\'');
            for c in m.chars() {
                match c {
                    '\'' => out.push_str("''"),
                    '\\' => out.push_str("\\\\"),
                    '\0' => out.push_str("\\0"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\x1a' => out.push_str("\\Z"),
                    c => out.push(c),
                }
            }
            out.push('\'');
        }
        out.push(')');
        out
    }

    /// The longest value in characters: CHARACTER_MAXIMUM_LENGTH (ENUM: the
    /// longest member; SET: every member and the commas between).
    pub fn max_chars(&self, kind: Kind) -> u32 {
        let len = |m: &String| m.chars().count() as u32;
        match kind {
            Kind::Enum => self.values.iter().map(len).max().unwrap_or(0),
            Kind::Set => {
                self.values.iter().map(len).sum::<u32>()
                    + self.values.len().saturating_sub(1) as u32
            }
        }
    }

    /// Converts a value being stored into an ENUM column: the member's text,
    /// and whether the value was bad (1265; the text is then `''`). A string
    /// matches a member under the collation; failing that, a string of
    /// digits is an index (MySQL's `Field_enum::store`); a number is an
    /// index. NULL passes through.
    pub fn store_enum(&self, v: &Value) -> (Value, bool) {
        let index = match v {
            Value::Null => return (Value::Null, false),
            Value::Bytes(b) => match self.position(b) {
                Some(p) => Some(p as u64),
                None => std::str::from_utf8(trim_end_spaces(b))
                    .ok()
                    .and_then(|s| s.trim_start().parse::<u64>().ok()),
            },
            other => other.to_decimal().and_then(|d| d.round().to_u64()),
        };
        match index {
            Some(i) if i >= 1 && i as usize <= self.values.len() => {
                (Value::str(&self.values[i as usize - 1]), false)
            }
            _ => (Value::str(""), true),
        }
    }

    /// Converts a value being stored into a SET column: the canonical text,
    /// and whether the value was bad (1265; the text then keeps the members
    /// that matched, as MySQL's). A string is comma-separated members, in
    /// any order, duplicates allowed; failing that, a string of digits is a
    /// bitmask (MySQL's `Field_set::store`); a number is a bitmask (bits past
    /// the last member are bad).
    pub fn store_set(&self, v: &Value) -> (Value, bool) {
        let mask_of = |n: u64| {
            let all = self.all_bits();
            (n & all, n & !all != 0)
        };
        let (mask, bad) = match v {
            Value::Null => return (Value::Null, false),
            Value::Bytes(b) => {
                let mut mask = 0u64;
                let mut bad = false;
                // The value loses its trailing spaces, its elements do not:
                // MySQL's find_set compares each element with the members
                // without padding, so 'a ,b' names no member 'a' (1265).
                let b = trim_end_spaces(b);
                if !b.is_empty() {
                    for part in b.split(|c| *c == b',') {
                        let position = if part.last() == Some(&b' ') {
                            None
                        } else {
                            self.position(part)
                        };
                        match position {
                            Some(p) => mask |= 1 << (p - 1),
                            None => bad = true,
                        }
                    }
                }
                match std::str::from_utf8(trim_end_spaces(b))
                    .ok()
                    .filter(|_| bad)
                    .and_then(|s| s.trim_start().parse::<u64>().ok())
                {
                    Some(n) => mask_of(n),
                    None => (mask, bad),
                }
            }
            other => match other.to_decimal().and_then(|d| d.round().to_u64()) {
                Some(n) => mask_of(n),
                None => (0, true),
            },
        };
        (Value::str(&self.set_text(mask)), bad)
    }
}

/// Warning / strict-mode error 1265 for a bad ENUM or SET value.
pub fn truncated(column: &str, row: u64) -> Error {
    Error::StrictModeError {
        code: 1265,
        message: format!("Data truncated for column '{column}' at row {row}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(v: &[&str]) -> &'static Members {
        intern(
            v.iter().map(|s| s.to_string()).collect(),
            Collation::Utf8mb4GeneralCi,
        )
    }

    #[test]
    fn interning_gives_one_list() {
        let a = members(&["x", "y"]);
        let b = members(&["x", "y"]);
        assert!(std::ptr::eq(a, b));
        assert!(!std::ptr::eq(a, members(&["y", "x"])));
    }

    #[test]
    fn enum_store_by_string_and_number() {
        let m = members(&["a", "b", "c"]);
        assert_eq!(m.store_enum(&Value::str("B  ")), (Value::str("b"), false));
        assert_eq!(m.store_enum(&Value::Int(3)), (Value::str("c"), false));
        assert_eq!(m.store_enum(&Value::str("2")), (Value::str("b"), false));
        assert_eq!(m.store_enum(&Value::str("d")), (Value::str(""), true));
        assert_eq!(m.store_enum(&Value::Int(0)), (Value::str(""), true));
        assert_eq!(m.store_enum(&Value::Int(4)), (Value::str(""), true));
        assert_eq!(m.member_position(b"C "), Some(3));
        assert_eq!(m.member_position(b""), None);
    }

    #[test]
    fn set_normalises_order_and_duplicates() {
        let m = members(&["a", "b", "c"]);
        assert_eq!(
            m.store_set(&Value::str("c,A,c")),
            (Value::str("a,c"), false)
        );
        assert_eq!(m.store_set(&Value::str("")), (Value::str(""), false));
        assert_eq!(m.store_set(&Value::Int(6)), (Value::str("b,c"), false));
        assert_eq!(m.store_set(&Value::Int(9)), (Value::str("a"), true));
        assert_eq!(m.store_set(&Value::str("a,x")), (Value::str("a"), true));
        // Trailing spaces end the value, not an element (MariaDB, MySQL).
        assert_eq!(
            m.store_set(&Value::str("c,a  ")),
            (Value::str("a,c"), false)
        );
        assert_eq!(
            m.store_set(&Value::str("c,A ,b")),
            (Value::str("b,c"), true)
        );
    }

    #[test]
    fn declaration_checks() {
        let mut v = vec!["a ".to_string(), "A".to_string()];
        check_members(Kind::Enum, "c", &mut v).expect("no count or comma problem");
        assert_eq!(v, ["a", "A"]);
        let m = intern(v, Collation::Utf8mb4GeneralCi);
        let mut notes = Vec::new();
        assert!(matches!(
            check_distinct(Kind::Enum, "c", m, true, &mut |c, t| notes.push((c, t))),
            Err(Error::Sql { code: 1291, .. })
        ));
        assert!(notes.is_empty());
        let bin = intern(vec!["a".into(), "A".into()], Collation::Utf8mb4Bin);
        assert!(check_distinct(Kind::Enum, "c", bin, true, &mut |_, _| {}).is_ok());
        // Outside strict mode: a note per member equal to a later one.
        let abab = intern(
            ["a", "b", "a", "b"].map(String::from).to_vec(),
            Collation::Latin1SwedishCi,
        );
        check_distinct(Kind::Set, "c1", abab, false, &mut |c, t| notes.push((c, t)))
            .expect("a note, not an error");
        assert_eq!(
            notes,
            [
                (
                    crate::types::warning::NOTE | 1291,
                    "Column 'c1' has duplicated value 'a' in SET".to_string()
                ),
                (
                    crate::types::warning::NOTE | 1291,
                    "Column 'c1' has duplicated value 'b' in SET".to_string()
                ),
            ]
        );
        let mut many: Vec<String> = (0..65).map(|i| i.to_string()).collect();
        assert!(matches!(
            check_members(Kind::Set, "c", &mut many),
            Err(Error::Sql { code: 1097, .. })
        ));
    }

    #[test]
    fn names_quote_as_mysql() {
        let m = members(&["it's", "a\\b"]);
        assert_eq!(m.sql_name(Kind::Enum), "enum('it''s','a\\\\b')");
        assert_eq!(m.max_chars(Kind::Set), 8);
    }
}
