//! MySQL's backslash escapes in string literals, where sqlparser's differ.
//!
//! MySQL's lexer knows the escapes `\0 \' \" \b \n \r \t \Z \\` (and keeps
//! the backslash of `\%` and `\_`, for LIKE); a backslash before any other
//! character is dropped, so `'\a'` is `a` (reference manual, 11.1.1 "String
//! Literals": "For all other escape sequences, backslash is ignored").
//! sqlparser's tokenizer reads two escapes more: `\a` as BEL (0x07) and `\f`
//! as form feed (0x0C), C's escapes. Its unescaping cannot be configured, so
//! [`mysql_string_escapes`] runs on the token stream after it: a string
//! token whose value holds a BEL or a form feed is the only one whose
//! reading can differ from MySQL's (a raw BEL or FF in the text is kept by
//! both readings), and for such a token the literal is read again from its
//! source text, by MySQL's rules.

use sqlparser::tokenizer::{Location, Token, TokenWithSpan};

/// Re-reads, by MySQL's escape rules, every string token of `tokens` whose
/// value sqlparser's `\a` / `\f` escapes may have changed. `text` is the text
/// the tokens were read from (their spans point into it).
pub fn mysql_string_escapes(tokens: &mut [TokenWithSpan], text: &str) {
    let suspect = |t: &Token| matches!(string_value(t), Some(s) if s.contains(['\u{7}', '\u{c}']));
    if !tokens.iter().any(|t| suspect(&t.token)) {
        return;
    }
    let lines: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    for t in tokens.iter_mut().filter(|t| suspect(&t.token)) {
        let (Some(start), Some(end)) = (
            offset(text, &lines, t.span.start),
            offset(text, &lines, t.span.end),
        ) else {
            continue;
        };
        let raw = &text[start..end];
        // The literal's quote: the first quote of the token's text (after a
        // prefix such as `N`), which also closes it.
        let Some(open) = raw.find(['\'', '"']) else {
            continue;
        };
        let quote = raw.as_bytes()[open] as char;
        if raw.len() < open + 2 || !raw.ends_with(quote) {
            continue;
        }
        let value = unescape(&raw[open + 1..raw.len() - 1], quote);
        if let Some(s) = string_value_mut(&mut t.token) {
            *s = value;
        }
    }
}

/// The value of a quoted string token.
fn string_value(t: &Token) -> Option<&String> {
    match t {
        Token::SingleQuotedString(s)
        | Token::DoubleQuotedString(s)
        | Token::NationalStringLiteral(s) => Some(s),
        _ => None,
    }
}

fn string_value_mut(t: &mut Token) -> Option<&mut String> {
    match t {
        Token::SingleQuotedString(s)
        | Token::DoubleQuotedString(s)
        | Token::NationalStringLiteral(s) => Some(s),
        _ => None,
    }
}

/// The byte offset in `text` of a tokenizer location (1-based line and
/// column, the column counted in characters); `None` past the text.
fn offset(text: &str, lines: &[usize], at: Location) -> Option<usize> {
    let line_start = *lines.get(usize::try_from(at.line).ok()?.checked_sub(1)?)?;
    let col = usize::try_from(at.column).ok()?.checked_sub(1)?;
    let rest = &text[line_start..];
    match rest.char_indices().nth(col) {
        Some((i, _)) => Some(line_start + i),
        None if rest.chars().count() == col => Some(text.len()),
        None => None,
    }
}

/// The characters a literal's body (between its quotes) stands for under
/// MySQL's escapes, the doubled `quote` read as one.
fn unescape(body: &str, quote: char) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('0') => out.push('\0'),
                Some('b') => out.push('\u{8}'),
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('t') => out.push('\t'),
                Some('Z') => out.push('\u{1a}'),
                Some(w @ ('%' | '_')) => {
                    out.push('\\');
                    out.push(w);
                }
                Some(other) => out.push(other),
                None => out.push('\\'),
            },
            c if c == quote && chars.peek() == Some(&quote) => {
                chars.next();
                out.push(quote);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::tokenizer::Tokenizer;

    fn strings(sql: &str) -> Vec<String> {
        let mut tokens = Tokenizer::new(&MySqlDialect {}, sql)
            .tokenize_with_location()
            .expect("tokenizes");
        mysql_string_escapes(&mut tokens, sql);
        tokens
            .into_iter()
            .filter_map(|t| string_value(&t.token).cloned())
            .collect()
    }

    #[test]
    fn unknown_escapes_drop_the_backslash() {
        assert_eq!(
            strings("SELECT '\\a', \"\\f\", '\\v', 'x\\a''y', N'\\f'"),
            ["a", "f", "v", "xa'y", "f"]
        );
    }

    #[test]
    fn mysql_escapes_and_raw_controls_are_kept() {
        assert_eq!(
            strings("SELECT '\\a\\0\\b\\n\\r\\t\\Z\\\\\\%\\_\\''"),
            ["a\0\u{8}\n\r\t\u{1a}\\\\%\\_'"]
        );
        // A BEL typed as itself stays a BEL; later lines and wide characters
        // before the literal do not move it.
        assert_eq!(
            strings("SELECT 'é\u{7}',\n  'ü', '\\f\u{c}'"),
            ["é\u{7}", "ü", "f\u{c}"]
        );
    }
}
