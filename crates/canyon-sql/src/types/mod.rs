//! Layer 1, **types**: what a value is, before any table exists.
//!
//! Values and MySQL's comparison rules ([`value`]), column types and strict
//! coercion ([`sqltype`], whose items are re-exported here), collations and
//! character sets ([`collation`], and the conversions of the non-UTF-8
//! sets in [`charset`]), the date/time arithmetic ([`datetime`]),
//! exact DECIMAL numbers of up to 65 digits ([`decimal`]),
//! ENUM and SET member lists ([`enumset`]), FULLTEXT words and ranking
//! ([`fulltext`]), the JSON type's binary form,
//! paths and order ([`json`]), time zones and their conversions
//! ([`timezone`]),
//! the text form of values in results and files ([`text`]), the
//! memcomparable key and row encodings ([`encoding`]) and the result-set
//! shapes that cross the engine boundary ([`result`]).
//!
//! Contract: pure functions over values and bytes. Nothing here knows a
//! table, a statement or a transaction; every other layer may import this
//! one, and it imports none of them.

pub mod charset;
pub mod collation;
pub mod datetime;
pub mod decimal;
pub mod encoding;
pub mod enumset;
pub mod fulltext;
pub mod json;
pub mod result;
pub mod sqltype;
pub mod text;
pub mod timezone;
pub mod value;
pub mod warning;

pub use sqltype::*;

pub use warning::NOTE;
