//! `ALTER {DATABASE | SCHEMA}`, which sqlparser does not read: its text to
//! [`Parsed::AlterDatabase`] (run by `crate::session`'s schema statements).

use super::parser::{Lexer, Parsed};
use canyon_common::{Error, Result};

/// Parses `ALTER {DATABASE | SCHEMA} [db] option ...` (MySQL manual, 15.1.2
/// "ALTER DATABASE Statement"), which sqlparser does not read. The options:
/// `[DEFAULT] {CHARACTER SET | CHARSET} [=] cs`, `[DEFAULT] COLLATE [=] c`,
/// `[DEFAULT] ENCRYPTION [=] 'N'` (accepted: Canyon does not encrypt, and
/// `'Y'` is 1235) and `READ ONLY [=] {DEFAULT | 0}` (accepted; `1` is 1235).
/// At least one option, as MySQL's grammar asks. `None` when the text is no
/// ALTER DATABASE.
pub(super) fn parse_alter_database(trimmed: &str) -> Option<Result<Parsed>> {
    let mut lx = Lexer { s: trimmed, pos: 0 };
    if !(lx.keyword("ALTER") && (lx.keyword("DATABASE") || lx.keyword("SCHEMA"))) {
        return None;
    }
    let syntax = || Some(Err(Error::Syntax(trimmed.to_string())));
    let option_words = [
        "DEFAULT",
        "CHARACTER",
        "CHARSET",
        "COLLATE",
        "ENCRYPTION",
        "READ",
    ];
    let at_option = |lx: &Lexer| {
        option_words.iter().any(|w| {
            Lexer {
                s: lx.s,
                pos: lx.pos,
            }
            .keyword(w)
        })
    };
    let db = if at_option(&lx) { None } else { lx.name() };
    let (mut charset, mut collation, mut any) = (None, None, false);
    let value = |lx: &mut Lexer| {
        lx.punct('=');
        lx.name()
    };
    loop {
        lx.keyword("DEFAULT");
        if lx.keyword("CHARSET") || (lx.keyword("CHARACTER") && lx.keyword("SET")) {
            let Some(v) = value(&mut lx) else {
                return syntax();
            };
            charset = Some(v);
        } else if lx.keyword("COLLATE") {
            let Some(v) = value(&mut lx) else {
                return syntax();
            };
            collation = Some(v);
        } else if lx.keyword("ENCRYPTION") {
            match value(&mut lx) {
                Some(v) if v.eq_ignore_ascii_case("N") => {}
                Some(_) => {
                    return Some(Err(Error::Unsupported(
                        "ALTER DATABASE ... ENCRYPTION = 'Y'".into(),
                    )))
                }
                None => return syntax(),
            }
        } else if lx.keyword("READ") && lx.keyword("ONLY") {
            match value(&mut lx) {
                Some(v) if v.eq_ignore_ascii_case("DEFAULT") || v == "0" => {}
                Some(_) => {
                    return Some(Err(Error::Unsupported(
                        "ALTER DATABASE ... READ ONLY = 1".into(),
                    )))
                }
                None => return syntax(),
            }
        } else {
            break;
        }
        any = true;
    }
    if !any || !lx.at_end() {
        return syntax();
    }
    Some(Ok(Parsed::AlterDatabase {
        db,
        charset,
        collation,
    }))
}
