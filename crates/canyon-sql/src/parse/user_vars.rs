//! User variables with quoted names: `@`name``, `@'name'`, `@"name"`.
//!
//! MySQL reads `@` followed at once by a quoted name as the user variable of
//! that name (manual, 11.4 "User-Defined Variables": "the user variable name
//! can contain other characters if you quote it as a string or identifier");
//! it is the same variable as the unquoted `@name`, and like every user
//! variable name it is compared without regard to case. MariaDB's Spider
//! engine sends such names (`SET @`spider_lc_./db/t` = ...`).
//!
//! sqlparser's tokenizer stops an `@` before a quote (so that `'u'@'h'`
//! account names stay three tokens); its parser then reads the backquoted
//! form as a placeholder and refuses the other two, and SET refuses all
//! three. [`join_quoted_user_variables`] runs on the token stream before the
//! parser and turns each `@` + quoted name that touch into one unquoted word
//! `@name`: exactly the token an unquoted `@name` makes, so everything past
//! the parser (binding, SET's assignment) sees one spelling. An `@` with
//! anything between it and the quote (`@ 'x'`) is left alone, as is the `@`
//! of an account name, which follows a name rather than starting an operand.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Word};

/// Joins each `@` immediately followed by a quoted name (a single- or
/// double-quoted string, or a backquoted identifier) into one word token
/// `@name`, in place. An `@` that directly follows a name or string (the
/// `@` of `'u'@'h'`) is not a user variable's and is left alone.
pub fn join_quoted_user_variables(tokens: &mut Vec<TokenWithSpan>) {
    if !tokens
        .windows(2)
        .any(|w| w[0].token == Token::AtSign && quoted_name(&w[1].token).is_some())
    {
        return;
    }
    let mut out = Vec::with_capacity(tokens.len());
    let mut it = std::mem::take(tokens).into_iter().peekable();
    while let Some(t) = it.next() {
        let joins = t.token == Token::AtSign
            && !follows_operand(out.last())
            && it.peek().and_then(|n| quoted_name(&n.token)).is_some();
        if !joins {
            out.push(t);
            continue;
        }
        let next = it.next().expect("peeked just above");
        let name = quoted_name(&next.token).expect("checked just above");
        out.push(TokenWithSpan {
            token: Token::Word(Word {
                value: format!("@{name}"),
                quote_style: None,
                keyword: Keyword::NoKeyword,
            }),
            span: t.span.union(&next.span),
        });
    }
    *tokens = out;
}

/// The name a quoted token spells, or `None` for any other token.
fn quoted_name(t: &Token) -> Option<&str> {
    match t {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Some(s),
        Token::Word(w) if w.quote_style.is_some() => Some(&w.value),
        _ => None,
    }
}

/// Whether the token before an `@` ends an operand (a name or a string), as
/// the user part of an account name `'u'@'h'` / `u@'h'` does; whitespace
/// between them counts as separating.
fn follows_operand(prev: Option<&TokenWithSpan>) -> bool {
    match prev.map(|p| &p.token) {
        // A keyword (`SELECT @'x'`, `SET @'x'`) starts an operand; any
        // other word is a name.
        Some(Token::Word(w)) => w.quote_style.is_some() || w.keyword == Keyword::NoKeyword,
        Some(Token::SingleQuotedString(_) | Token::DoubleQuotedString(_) | Token::Number(..)) => {
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::tokenizer::Tokenizer;

    fn words(sql: &str) -> Vec<String> {
        let mut tokens = Tokenizer::new(&MySqlDialect {}, sql)
            .tokenize_with_location()
            .expect("tokenizes");
        join_quoted_user_variables(&mut tokens);
        tokens
            .into_iter()
            .filter(|t| !matches!(t.token, Token::Whitespace(_)))
            .map(|t| t.token.to_string())
            .collect()
    }

    #[test]
    fn every_quoted_form_becomes_one_word() {
        assert_eq!(words("SET @`a.b/c` = 1"), ["SET", "@a.b/c", "=", "1"]);
        assert_eq!(words("SELECT @'x', @\"y\""), ["SELECT", "@x", ",", "@y"]);
        assert_eq!(words("SELECT @`it``s`"), ["SELECT", "@it`s"]);
    }

    #[test]
    fn account_names_and_separated_at_signs_stay_apart() {
        assert_eq!(words("'u'@'h'"), ["'u'", "@", "'h'"]);
        assert_eq!(words("SELECT @ 'x'"), ["SELECT", "@", "'x'"]);
    }
}
