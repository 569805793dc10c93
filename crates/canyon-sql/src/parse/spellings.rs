//! Statement spellings MySQL accepts and sqlparser does not read, rewritten
//! into forms it does: `SET a = 1, NAMES cs`, `SET CHARACTER SET cs`, ALTER TABLE's `DROP KEY`,
//! bare `RENAME t2`, ENGINE / COMMENT table options, `REAL(M,D)` /
//! `DOUBLE PRECISION(M,D)`, a window function's `FROM FIRST` /
//! `RESPECT NULLS`, compound INTERVAL units (`DAY_SECOND`), `\N` and
//! `DROP TABLES`. Each rewrite is tried only after sqlparser has refused
//! the text (`crate::parse::parser`'s fallback), so the common path never pays
//! for them; each leaves quoted strings and names alone.

use super::parser::Lexer;

/// `SET a = 1, NAMES cs [COLLATE c], ...` (MariaDB Connector/J sends
/// `set sql_mode=...,NAMES utf8mb4` at connect), which sqlparser parses only
/// alone: rewritten with `NAMES cs` as the three assignments it stands for
/// (MySQL manual, 15.7.6.3 "SET NAMES Statement"). `None` when the text is not
/// such a list.
pub(super) fn set_names_in_list(trimmed: &str) -> Option<String> {
    let head = trimmed.get(..4)?;
    if !head.eq_ignore_ascii_case("SET ") {
        return None;
    }
    let items = split_top_level_commas(&trimmed[4..]);
    if items.len() < 2 {
        return None;
    }
    let mut out = Vec::with_capacity(items.len() + 2);
    let mut rewritten = false;
    for item in items {
        let words: Vec<&str> = item.split_whitespace().collect();
        match words.as_slice() {
            [names, cs, rest @ ..] if names.eq_ignore_ascii_case("NAMES") => {
                let cs = cs.trim_matches(['\'', '"', '`']);
                let value = if cs.eq_ignore_ascii_case("DEFAULT") {
                    "DEFAULT".to_string()
                } else {
                    format!("'{cs}'")
                };
                for v in [
                    "character_set_client",
                    "character_set_connection",
                    "character_set_results",
                ] {
                    out.push(format!("{v} = {value}"));
                }
                match rest {
                    [] => {}
                    [collate, c] if collate.eq_ignore_ascii_case("COLLATE") => {
                        let c = c.trim_matches(['\'', '"', '`']);
                        out.push(format!("collation_connection = '{c}'"));
                    }
                    _ => return None,
                }
                rewritten = true;
            }
            _ => out.push(item.to_string()),
        }
    }
    rewritten.then(|| format!("SET {}", out.join(", ")))
}

/// `SET CHARACTER SET cs` / `SET CHARSET cs` (and `DEFAULT`), which
/// sqlparser does not read: rewritten as the assignments MySQL defines it
/// to make (manual, 15.7.6.2 "SET CHARACTER SET Statement"):
/// `character_set_client` and `character_set_results` become `cs`, and the
/// connection's character set and collation those of the database
/// (`@@collation_database`). `None` when the text is not that statement.
pub(super) fn set_character_set(trimmed: &str) -> Option<String> {
    let mut lx = Lexer { s: trimmed, pos: 0 };
    if !lx.keyword("SET") {
        return None;
    }
    if !(lx.keyword("CHARSET") || (lx.keyword("CHARACTER") && lx.keyword("SET"))) {
        return None;
    }
    let words: Vec<&str> = trimmed[lx.pos..]
        .trim()
        .trim_end_matches(';')
        .split_whitespace()
        .collect();
    let [cs] = words.as_slice() else {
        return None;
    };
    let cs = cs.trim_matches(['\'', '"', '`']);
    let value = if cs.eq_ignore_ascii_case("DEFAULT") {
        "DEFAULT".to_string()
    } else {
        format!("'{}'", cs.replace('\'', "''"))
    };
    Some(format!(
        "SET character_set_client = {value}, character_set_results = {value}, \
         collation_connection = @@collation_database"
    ))
}

/// ALTER TABLE clauses in MySQL spellings sqlparser 0.63 does not parse,
/// rewritten to the spellings it does: `DROP KEY k` is `DROP INDEX k`,
/// `RENAME t2` is `RENAME TO t2` (MySQL manual, 15.1.9 "ALTER TABLE
/// Statement"), and the ENGINE, COMMENT and ORDER BY clauses are table
/// properties. `None` when the text is not an ALTER TABLE with one.
pub(super) fn alter_table_spellings(trimmed: &str) -> Option<String> {
    let mut lx = Lexer { s: trimmed, pos: 0 };
    if !(lx.keyword("ALTER") && lx.keyword("TABLE")) {
        return None;
    }
    lx.name()?;
    while lx.punct('.') {
        lx.name()?;
    }
    let head = &trimmed[..lx.pos];
    let mut changed = false;
    let mut items = split_top_level_commas(&trimmed[lx.pos..]);
    // ORDER BY takes the rest of the list (its items are comma-separated
    // too; MySQL's grammar ends the ALTER list with it).
    let order_by = items.iter().position(|c| {
        let mut cl = Lexer { s: c, pos: 0 };
        cl.keyword("ORDER") && cl.keyword("BY")
    });
    let order_by = match order_by {
        Some(at) => {
            let spelled = alter_order_by(&items[at..])?;
            items.truncate(at);
            changed = true;
            Some(spelled)
        }
        None => None,
    };
    let clauses: Vec<String> = items
        .into_iter()
        .map(|c| {
            let mut cl = Lexer { s: c, pos: 0 };
            if cl.keyword("DROP") && cl.keyword("KEY") {
                changed = true;
                return format!("DROP INDEX{}", &c[cl.pos..]);
            }
            if let Some(option) = alter_table_option(c) {
                changed = true;
                return option;
            }
            let mut cl = Lexer { s: c, pos: 0 };
            if cl.keyword("RENAME") {
                let after = cl.pos;
                let named = ["TO", "AS", "COLUMN", "INDEX", "KEY"]
                    .iter()
                    .any(|k| Lexer { s: c, pos: after }.keyword(k));
                if !named {
                    changed = true;
                    return format!("RENAME TO{}", &c[after..]);
                }
            }
            c.to_string()
        })
        .chain(order_by)
        .collect();
    changed.then(|| format!("{head} {}", clauses.join(", ")))
}

/// The key under which `alter_order_by` passes ALTER TABLE ... ORDER BY.
pub const ALTER_OPTION_ORDER_BY: &str = "canyon_order_by";

/// `ORDER BY col [ASC | DESC], ...` of an ALTER TABLE (its items split at
/// the commas: `items[0]` starts with ORDER BY), spelled
/// `SET TBLPROPERTIES (canyon_order_by = '...')` with the items one per
/// line, each the column name, a tab and `A` or `D`
/// ([`parse_alter_order_by`] reads it back). `None` when an item is not a
/// column name with an optional direction (MySQL's `alter_order_item`).
fn alter_order_by(items: &[&str]) -> Option<String> {
    let mut spelled = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let mut lx = Lexer { s: item, pos: 0 };
        if i == 0 && !(lx.keyword("ORDER") && lx.keyword("BY")) {
            return None;
        }
        lx.skip_ws();
        let quoted = lx.s[lx.pos..].starts_with('`');
        let name = lx.name()?;
        // An unquoted `t.c` names column c.
        let name = match name.rsplit_once('.') {
            Some((_, c)) if !quoted => c.to_string(),
            _ => name,
        };
        let dir = if lx.keyword("DESC") {
            'D'
        } else {
            lx.keyword("ASC");
            'A'
        };
        if !lx.s[lx.pos..].trim().is_empty() || name.contains(['\t', '\n']) {
            return None;
        }
        spelled.push(format!("{name}\t{dir}"));
    }
    let value = spelled.join("\n").replace('\\', "\\\\").replace('\'', "''");
    Some(format!(
        " SET TBLPROPERTIES ({ALTER_OPTION_ORDER_BY} = '{value}')"
    ))
}

/// The columns and directions (`true`: DESC) of an ALTER TABLE ... ORDER BY
/// as `alter_order_by` spelled them.
pub fn parse_alter_order_by(value: &str) -> Vec<(String, bool)> {
    value
        .split('\n')
        .filter_map(|item| item.rsplit_once('\t'))
        .map(|(name, dir)| (name.to_string(), dir == "D"))
        .collect()
}

/// The key under which `alter_table_option` passes a table option.
pub const ALTER_OPTION_ENGINE: &str = "canyon_engine";
/// See [`ALTER_OPTION_ENGINE`].
pub const ALTER_OPTION_COMMENT: &str = "canyon_comment";

/// An ALTER TABLE clause that sets the ENGINE or COMMENT table option
/// (`ENGINE [=] name`, `COMMENT [=] 'text'`), which sqlparser does not
/// read, spelled as the form it does read for table options,
/// `SET TBLPROPERTIES (canyon_engine = 'name')`; `crate::ddl::alter_ops`
/// turns that into the operation. `None` for any other clause.
fn alter_table_option(clause: &str) -> Option<String> {
    let mut lx = Lexer { s: clause, pos: 0 };
    let key = if lx.keyword("ENGINE") {
        ALTER_OPTION_ENGINE
    } else if lx.keyword("COMMENT") {
        ALTER_OPTION_COMMENT
    } else {
        return None;
    };
    lx.punct('=');
    lx.skip_ws();
    let rest = clause[lx.pos..].trim_end();
    let value = if key == ALTER_OPTION_COMMENT {
        // The string literal as written (its quotes and escapes).
        if !rest.starts_with('\'') && !rest.starts_with('"') {
            return None;
        }
        rest.to_string()
    } else {
        let name = lx.name()?;
        if !clause[lx.pos..].trim().is_empty() {
            return None;
        }
        format!("'{}'", name.replace('\'', "''"))
    };
    Some(format!(" SET TBLPROPERTIES ({key} = {value})"))
}

/// `REAL(M,D)` and `DOUBLE PRECISION(M,D)` in a CREATE or ALTER TABLE,
/// which sqlparser reads only without the digits, spelled `DOUBLE(M,D)`
/// (the same type in MySQL); `None` when the text has neither. Quoted
/// strings and names are left alone.
pub(super) fn real_type_spellings(trimmed: &str) -> Option<String> {
    let mut head = Lexer { s: trimmed, pos: 0 };
    if !(head.keyword("CREATE") || head.keyword("ALTER")) {
        return None;
    }
    let b = trimmed.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let (mut out, mut copied, mut i, mut changed) = (String::new(), 0, 0, false);
    while i < b.len() {
        let c = b[i];
        if c == b'\'' || c == b'"' || c == b'`' {
            // Skip the quoted text (a backslash escapes inside strings).
            i += 1;
            while i < b.len() && b[i] != c {
                i += if b[i] == b'\\' && c != b'`' { 2 } else { 1 };
            }
            i += 1;
            continue;
        }
        if !ident(c) || (i > 0 && ident(b[i - 1])) {
            i += 1;
            continue;
        }
        let mut lx = Lexer { s: trimmed, pos: i };
        let replaced = (lx.keyword("REAL") || (lx.keyword("DOUBLE") && lx.keyword("PRECISION")))
            .then_some(lx.pos);
        if let Some(end) = replaced {
            lx.skip_ws();
            if lx.punct('(') {
                out.push_str(&trimmed[copied..i]);
                out.push_str("DOUBLE");
                copied = end;
                changed = true;
            }
            i = end;
            continue;
        }
        while i < b.len() && ident(b[i]) {
            i += 1;
        }
    }
    out.push_str(&trimmed[copied..]);
    changed.then_some(out)
}

/// Splits `text` at the commas outside parentheses and quotes.
pub(super) fn split_top_level_commas(text: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None::<char>, 0);
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (Some(_), '\\') => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth -= 1,
            (None, ',') if depth == 0 => {
                items.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(text[start..].trim());
    items
}

/// `CREATE FULLTEXT INDEX name ON t (cols) [options]`, which sqlparser does
/// not read, as the `ALTER TABLE t ADD FULLTEXT INDEX name (cols) [options]`
/// it stands for (MySQL maps CREATE INDEX to ALTER TABLE the same way).
/// `None` when the text is not that form.
pub(super) fn create_fulltext_index(trimmed: &str) -> Option<String> {
    let mut rest = trimmed;
    for word in ["CREATE", "FULLTEXT", "INDEX"] {
        let head = rest.get(..word.len())?;
        if !head.eq_ignore_ascii_case(word) {
            return None;
        }
        rest = rest[word.len()..]
            .strip_prefix(char::is_whitespace)?
            .trim_start();
    }
    let name_end = rest.find(char::is_whitespace)?;
    let (name, after) = rest.split_at(name_end);
    let after = after.trim_start();
    let on = after.get(..3)?;
    if !on.eq_ignore_ascii_case("ON ") && !on.eq_ignore_ascii_case("ON\t") {
        return None;
    }
    let after = after[3..].trim_start();
    let paren = after.find('(')?;
    let (table, cols) = after.split_at(paren);
    let table = table.trim();
    if table.is_empty() {
        return None;
    }
    Some(format!(
        "ALTER TABLE {table} ADD FULLTEXT INDEX {name} {cols}"
    ))
}

/// What follows a window function's closing parenthesis before OVER in
/// MySQL 8's grammar: `[FROM {FIRST | LAST}] [{RESPECT | IGNORE} NULLS]`.
/// Returns, per occurrence outside quotes, the byte range of those words
/// and whether it says FROM LAST.
fn window_modifiers(text: &str) -> Vec<(std::ops::Range<usize>, bool)> {
    let b = text.as_bytes();
    let word_at = |pos: usize, w: &str| -> Option<usize> {
        let end = pos + w.len();
        let ok = b.get(pos..end)?.eq_ignore_ascii_case(w.as_bytes())
            && b.get(end)
                .is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_'));
        ok.then_some(end)
    };
    let skip_ws = |mut p: usize| {
        while p < b.len() && b[p].is_ascii_whitespace() {
            p += 1;
        }
        p
    };
    let mut out = Vec::new();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) => {
                if c == b'\\' && q != b'`' {
                    i += 1;
                } else if c == q {
                    quote = None;
                }
            }
            None if matches!(c, b'\'' | b'"' | b'`') => quote = Some(c),
            None if c == b')' => {
                let start = skip_ws(i + 1);
                let mut p = start;
                let mut last = false;
                let mut any = false;
                if let Some(e) = word_at(p, "FROM") {
                    let q = skip_ws(e);
                    if let Some(e) =
                        word_at(q, "FIRST").or_else(|| word_at(q, "LAST").inspect(|_| last = true))
                    {
                        p = skip_ws(e);
                        any = true;
                    }
                }
                if let Some(e) = word_at(p, "RESPECT") {
                    if let Some(e) = word_at(skip_ws(e), "NULLS") {
                        p = skip_ws(e);
                        any = true;
                    }
                }
                if any && word_at(p, "OVER").is_some() {
                    out.push((start..p, last));
                }
            }
            None => {}
        }
        i += 1;
    }
    out
}

/// `NTH_VALUE(x, n) FROM FIRST OVER w` and `... RESPECT NULLS OVER w`: MySQL
/// 8's spellings of the defaults (sqlparser reads neither), rewritten
/// without them. `None` when the text has none, or has FROM LAST (see
/// [`window_from_last`]).
pub(super) fn window_spellings(trimmed: &str) -> Option<String> {
    let found = window_modifiers(trimmed);
    if found.is_empty() || found.iter().any(|(_, last)| *last) {
        return None;
    }
    let mut out = String::with_capacity(trimmed.len());
    let mut at = 0;
    for (r, _) in found {
        out.push_str(&trimmed[at..r.start]);
        at = r.end;
    }
    out.push_str(&trimmed[at..]);
    Some(out)
}

/// Whether the text uses NTH_VALUE's FROM LAST, which MySQL 8 parses and
/// refuses (1235), as Canyon does.
pub(super) fn window_from_last(trimmed: &str) -> bool {
    window_modifiers(trimmed).iter().any(|(_, last)| *last)
}

/// MySQL's compound INTERVAL units and the `TO` forms sqlparser reads for
/// them (`crate::plan::bind_functions` maps them back). SECOND takes no
/// `TO` in sqlparser, so SECOND_MICROSECOND is spelled backwards.
const INTERVAL_UNITS: [(&str, &str); 11] = [
    ("YEAR_MONTH", "YEAR TO MONTH"),
    ("DAY_HOUR", "DAY TO HOUR"),
    ("DAY_MINUTE", "DAY TO MINUTE"),
    ("DAY_SECOND", "DAY TO SECOND"),
    ("DAY_MICROSECOND", "DAY TO MICROSECOND"),
    ("HOUR_MINUTE", "HOUR TO MINUTE"),
    ("HOUR_SECOND", "HOUR TO SECOND"),
    ("HOUR_MICROSECOND", "HOUR TO MICROSECOND"),
    ("MINUTE_SECOND", "MINUTE TO SECOND"),
    ("MINUTE_MICROSECOND", "MINUTE TO MICROSECOND"),
    ("SECOND_MICROSECOND", "MICROSECOND TO SECOND"),
];

/// `INTERVAL '1 2:03:04' DAY_SECOND` and the other compound units, which
/// sqlparser does not read: each unit word outside quotes and comments'
/// reach (a whole word, not a quoted name) rewritten into its `TO` form.
/// `None` when the text has none.
pub(super) fn interval_units(trimmed: &str) -> Option<String> {
    let b = trimmed.as_bytes();
    let is_word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let mut out = String::with_capacity(trimmed.len() + 16);
    let mut quote: Option<u8> = None;
    let (mut i, mut copied, mut any) = (0, 0, false);
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) => {
                if c == b'\\' && q != b'`' {
                    i += 1;
                } else if c == q {
                    quote = None;
                }
            }
            None if matches!(c, b'\'' | b'"' | b'`') => quote = Some(c),
            None if is_word(c) && (i == 0 || !is_word(b[i - 1])) => {
                let end = (i..b.len()).find(|&j| !is_word(b[j])).unwrap_or(b.len());
                let word = &b[i..end];
                if let Some((_, to)) = INTERVAL_UNITS
                    .iter()
                    .find(|(w, _)| w.as_bytes().eq_ignore_ascii_case(word))
                {
                    out.push_str(&trimmed[copied..i]);
                    out.push_str(to);
                    copied = end;
                    any = true;
                }
                i = end;
                continue;
            }
            None => {}
        }
        i += 1;
    }
    out.push_str(&trimmed[copied..]);
    any.then_some(out)
}

/// `\N` outside quotes, MariaDB's (and MySQL 5.7's) synonym of NULL
/// (`VALUES (0, \N, 3)`), rewritten as `NULL`. MySQL 8.0 removed the
/// synonym (a syntax error there); Canyon accepts it because no valid MySQL
/// 8 text has a `\` outside quotes, so the rewrite (tried only after
/// sqlparser refused the text) cannot change what valid text means.
/// `None` when the text has none.
pub(super) fn backslash_n_null(trimmed: &str) -> Option<String> {
    let b = trimmed.as_bytes();
    let is_word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let mut out = String::with_capacity(trimmed.len() + 8);
    let mut quote: Option<u8> = None;
    let (mut i, mut copied, mut any) = (0, 0, false);
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) => {
                if c == b'\\' && q != b'`' {
                    i += 1;
                } else if c == q {
                    quote = None;
                }
            }
            None if matches!(c, b'\'' | b'"' | b'`') => quote = Some(c),
            None if c == b'\\'
                && b.get(i + 1) == Some(&b'N')
                && b.get(i + 2).is_none_or(|&n| !is_word(n)) =>
            {
                out.push_str(&trimmed[copied..i]);
                out.push_str("NULL");
                i += 2;
                copied = i;
                any = true;
                continue;
            }
            None => {}
        }
        i += 1;
    }
    out.push_str(&trimmed[copied..]);
    any.then_some(out)
}

/// `DROP [TEMPORARY] TABLES ...`, MySQL's synonym of DROP TABLE, rewritten
/// as DROP TABLE. `None` when the text is not such a statement.
pub(super) fn drop_tables(trimmed: &str) -> Option<String> {
    let mut lx = Lexer { s: trimmed, pos: 0 };
    if !lx.keyword("DROP") {
        return None;
    }
    lx.keyword("TEMPORARY");
    lx.skip_ws();
    let at = lx.pos;
    if !lx.keyword("TABLES") {
        return None;
    }
    Some(format!("{}TABLE{}", &trimmed[..at], &trimmed[lx.pos..]))
}
