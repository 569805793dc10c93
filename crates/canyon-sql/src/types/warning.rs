//! Warning levels: MySQL's "Warning" and "Note" carried in one code.

/// The bit that marks a warning's code as a note: a warning a statement
/// raises travels as `(code, message)` through `EvalContext::warn`, the
/// statement's effects and LOAD DATA's fields, and most are MySQL's level
/// "Warning"; a few are "Note" (1265 for a DECIMAL that lost fractional
/// digits, which strict mode leaves a note). Such a code carries this bit
/// (MySQL's codes stay below 0x8000), so the channels need no level of their
/// own; strict mode never makes it an error (it is no code of
/// `STRICT_WARNINGS`), and the session shows it through `crate::expr::eval::warning_level`.
pub const NOTE: u16 = 0x8000;
