//! The JSON functions (MySQL 8.0 manual, 14.17 "JSON Functions"), the
//! `->` / `->>` operators (bound as JSON_EXTRACT and
//! JSON_UNQUOTE(JSON_EXTRACT)) and CAST(x AS JSON).
//!
//! Arguments come in three roles, each converted as MySQL converts it:
//!
//! * a **document** (JSON_EXTRACT's first, JSON_CONTAINS's candidate, ...):
//!   a JSON value as it is, a string parsed as JSON text (3141
//!   ER_INVALID_JSON_TEXT_IN_PARAM when it is none), any other type 3146
//!   ER_INVALID_TYPE_FOR_JSON;
//! * a **path**: its text parsed by [`crate::types::json::parse_path`] (3143
//!   when it is no path; 3149 where wildcards are not allowed);
//! * a **value** (JSON_OBJECT's, JSON_ARRAY's, JSON_SET's): converted to JSON
//!   ([`crate::types::value::sql_to_node`]) — a string becomes a JSON
//!   string, it is not parsed.
//!
//! A SQL NULL document or path gives NULL; a NULL value is JSON `null`.
//! Reads walk the binary form in place ([`JsonRef`]); the modifying
//! functions decode the document into a [`Node`] tree, change it, and
//! encode it again.
//!
//! Also `value MEMBER OF (array)`, JSON_OVERLAPS and JSON_PRETTY.
//!
//! Differences from MySQL 8: SQL TRUE / FALSE are the integers 1 / 0 here
//! (MySQL makes JSON booleans of them in JSON_ARRAY / JSON_OBJECT); JSON_SEARCH
//! compares case-insensitively by Unicode lower case (MySQL by the search
//! string's collation) and takes path arguments without wildcards only;
//! JSON_MERGE_PATCH / JSON_MERGE_PRESERVE give NULL for any NULL argument.

use crate::expr::eval::{eval, Env};
use crate::expr::tree::Expr;
use crate::types::json::{self, JsonRef, JsonType, Leg, Node, Path};
use crate::types::value::{sql_to_node, Value};
use crate::types::ExprKind;
use canyon_common::{Error, Result};

/// A JSON function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum JsonFunc {
    Extract,
    Unquote,
    Quote,
    Object,
    Array,
    Contains,
    ContainsPath,
    Set,
    Insert,
    Replace,
    Remove,
    Valid,
    Type,
    Length,
    Keys,
    Depth,
    ArrayAppend,
    ArrayInsert,
    MergePreserve,
    MergePatch,
    Search,
    Overlaps,
    Pretty,
    /// `value MEMBER OF (array)`: bound from its own syntax.
    MemberOf,
    /// CAST(x AS JSON).
    Cast,
}

/// Resolves a function name (upper-case).
pub fn lookup(name: &str) -> Option<JsonFunc> {
    Some(match name {
        "JSON_EXTRACT" => JsonFunc::Extract,
        "JSON_UNQUOTE" => JsonFunc::Unquote,
        "JSON_QUOTE" => JsonFunc::Quote,
        "JSON_OBJECT" => JsonFunc::Object,
        "JSON_ARRAY" => JsonFunc::Array,
        "JSON_CONTAINS" => JsonFunc::Contains,
        "JSON_CONTAINS_PATH" => JsonFunc::ContainsPath,
        "JSON_SET" => JsonFunc::Set,
        "JSON_INSERT" => JsonFunc::Insert,
        "JSON_REPLACE" => JsonFunc::Replace,
        "JSON_REMOVE" => JsonFunc::Remove,
        "JSON_VALID" => JsonFunc::Valid,
        "JSON_TYPE" => JsonFunc::Type,
        "JSON_LENGTH" => JsonFunc::Length,
        "JSON_KEYS" => JsonFunc::Keys,
        "JSON_DEPTH" => JsonFunc::Depth,
        "JSON_ARRAY_APPEND" => JsonFunc::ArrayAppend,
        "JSON_ARRAY_INSERT" => JsonFunc::ArrayInsert,
        "JSON_MERGE_PRESERVE" | "JSON_MERGE" => JsonFunc::MergePreserve,
        "JSON_MERGE_PATCH" => JsonFunc::MergePatch,
        "JSON_SEARCH" => JsonFunc::Search,
        "JSON_OVERLAPS" => JsonFunc::Overlaps,
        "JSON_PRETTY" => JsonFunc::Pretty,
        _ => return None,
    })
}

impl JsonFunc {
    /// The name MySQL's error messages use.
    pub fn name(self) -> &'static str {
        match self {
            JsonFunc::Extract => "json_extract",
            JsonFunc::Unquote => "json_unquote",
            JsonFunc::Quote => "json_quote",
            JsonFunc::Object => "json_object",
            JsonFunc::Array => "json_array",
            JsonFunc::Contains => "json_contains",
            JsonFunc::ContainsPath => "json_contains_path",
            JsonFunc::Set => "json_set",
            JsonFunc::Insert => "json_insert",
            JsonFunc::Replace => "json_replace",
            JsonFunc::Remove => "json_remove",
            JsonFunc::Valid => "json_valid",
            JsonFunc::Type => "json_type",
            JsonFunc::Length => "json_length",
            JsonFunc::Keys => "json_keys",
            JsonFunc::Depth => "json_depth",
            JsonFunc::ArrayAppend => "json_array_append",
            JsonFunc::ArrayInsert => "json_array_insert",
            JsonFunc::MergePreserve => "json_merge_preserve",
            JsonFunc::MergePatch => "json_merge_patch",
            JsonFunc::Search => "json_search",
            JsonFunc::Overlaps => "json_overlaps",
            JsonFunc::Pretty => "json_pretty",
            JsonFunc::MemberOf => "member of",
            JsonFunc::Cast => "cast_as_json",
        }
    }

    /// Whether `n` arguments are allowed (MySQL 1582 otherwise).
    pub fn arity_ok(self, n: usize) -> bool {
        match self {
            JsonFunc::Unquote
            | JsonFunc::Quote
            | JsonFunc::Valid
            | JsonFunc::Type
            | JsonFunc::Depth
            | JsonFunc::Pretty
            | JsonFunc::Cast => n == 1,
            JsonFunc::Overlaps | JsonFunc::MemberOf => n == 2,
            JsonFunc::Extract => n >= 2,
            JsonFunc::Object => n.is_multiple_of(2),
            JsonFunc::Array => true,
            JsonFunc::Contains => n == 2 || n == 3,
            JsonFunc::ContainsPath => n >= 3,
            JsonFunc::Set
            | JsonFunc::Insert
            | JsonFunc::Replace
            | JsonFunc::ArrayAppend
            | JsonFunc::ArrayInsert => n >= 3 && !n.is_multiple_of(2),
            JsonFunc::Remove => n >= 2,
            JsonFunc::Length | JsonFunc::Keys => n == 1 || n == 2,
            JsonFunc::MergePreserve | JsonFunc::MergePatch => n >= 2,
            JsonFunc::Search => n >= 3,
        }
    }

    /// The static result kind.
    pub fn kind(self) -> ExprKind {
        match self {
            JsonFunc::Unquote | JsonFunc::Quote | JsonFunc::Type | JsonFunc::Pretty => {
                ExprKind::String
            }
            JsonFunc::Valid
            | JsonFunc::Overlaps
            | JsonFunc::MemberOf
            | JsonFunc::Contains
            | JsonFunc::ContainsPath
            | JsonFunc::Length
            | JsonFunc::Depth => ExprKind::Int,
            _ => ExprKind::Json,
        }
    }
}

fn invalid_type(n: usize, f: JsonFunc) -> Error {
    Error::Sql {
        code: 3146,
        sqlstate: *b"22032",
        message: format!(
            "Invalid data type for JSON data in argument {n} to function {}; a JSON string or JSON type is required.",
            f.name()
        ),
    }
}

fn no_wildcards() -> Error {
    Error::Sql {
        code: 3149,
        sqlstate: *b"42000",
        message: "In this situation, path expressions may not contain the * and ** tokens.".into(),
    }
}

/// Argument `i` (0-based) as a document; `None` for NULL.
fn doc(v: &Value, i: usize, f: JsonFunc) -> Result<Option<Vec<u8>>> {
    match v {
        Value::Null => Ok(None),
        Value::Json(j) => Ok(Some(j.clone())),
        Value::Bytes(b) => json::parse(b)
            .map(|n| Some(n.encode()))
            .map_err(|e| json::invalid_text_in_arg(&e, i + 1, f.name())),
        _ => Err(invalid_type(i + 1, f)),
    }
}

/// Argument value as a path; `None` for NULL.
fn path(v: &Value) -> Result<Option<Path>> {
    if v.is_null() {
        return Ok(None);
    }
    let text = v.to_display();
    json::parse_path(&text)
        .map(Some)
        .map_err(json::invalid_path)
}

/// A path that must name one place (no wildcards).
fn exact_path(v: &Value) -> Result<Option<Path>> {
    match path(v)? {
        Some(p) if p.has_wildcard() => Err(no_wildcards()),
        p => Ok(p),
    }
}

fn out(n: &Node) -> Value {
    Value::Json(n.encode())
}

/// Evaluates a call (all arguments evaluated first: none short-circuits).
pub fn call(f: JsonFunc, args: &[Expr], env: &Env<'_>) -> Result<Value> {
    let v: Vec<Value> = args.iter().map(|a| eval(a, env)).collect::<Result<_>>()?;
    match f {
        JsonFunc::Cast => Ok(match &v[0] {
            Value::Null => Value::Null,
            Value::Bytes(_) | Value::Json(_) => match doc(&v[0], 0, f)? {
                Some(d) => Value::Json(d),
                None => Value::Null,
            },
            other => out(&sql_to_node(other)),
        }),
        JsonFunc::Extract => extract(&v, f),
        JsonFunc::Unquote => unquote(&v[0], f),
        JsonFunc::Quote => Ok(match &v[0] {
            Value::Null => Value::Null,
            other => {
                let mut s = String::new();
                json::quote_into(&other.to_display(), &mut s);
                Value::Bytes(s.into_bytes())
            }
        }),
        JsonFunc::Object => {
            let mut members = Vec::new();
            for pair in v.chunks(2) {
                if pair[0].is_null() {
                    return Err(Error::Sql {
                        code: 3158,
                        sqlstate: *b"22032",
                        message: "JSON documents may not contain NULL member names.".into(),
                    });
                }
                Node::object_set(&mut members, pair[0].to_display(), sql_to_node(&pair[1]));
            }
            Ok(out(&Node::Object(members)))
        }
        JsonFunc::Array => Ok(out(&Node::Array(v.iter().map(sql_to_node).collect()))),
        JsonFunc::Valid => Ok(match &v[0] {
            Value::Null => Value::Null,
            Value::Json(_) => Value::Int(1),
            Value::Bytes(b) => Value::Int(json::parse(b).is_ok() as i64),
            _ => Value::Int(0),
        }),
        JsonFunc::Type => Ok(match doc(&v[0], 0, f)? {
            Some(d) => Value::str(JsonRef::new(&d).kind().name()),
            None => Value::Null,
        }),
        JsonFunc::Depth => Ok(match doc(&v[0], 0, f)? {
            Some(d) => Value::Int(JsonRef::new(&d).depth() as i64),
            None => Value::Null,
        }),
        JsonFunc::Length | JsonFunc::Keys => {
            let Some(d) = doc(&v[0], 0, f)? else {
                return Ok(Value::Null);
            };
            let root = JsonRef::new(&d);
            let target = match v.get(1) {
                None => Some(root),
                Some(p) => match exact_path(p)? {
                    None => return Ok(Value::Null),
                    Some(p) => first(root, &p),
                },
            };
            let Some(t) = target else {
                return Ok(Value::Null);
            };
            Ok(match f {
                JsonFunc::Length => Value::Int(t.len() as i64),
                _ if t.kind() == JsonType::Object => out(&Node::Array(
                    (0..t.len())
                        .map(|i| Node::Str(t.key(i).to_string()))
                        .collect(),
                )),
                _ => Value::Null,
            })
        }
        JsonFunc::Contains => {
            let (Some(target), Some(cand)) = (doc(&v[0], 0, f)?, doc(&v[1], 1, f)?) else {
                return Ok(Value::Null);
            };
            let root = JsonRef::new(&target);
            let t = match v.get(2) {
                None => Some(root),
                Some(p) => match exact_path(p)? {
                    None => return Ok(Value::Null),
                    Some(p) => first(root, &p),
                },
            };
            Ok(match t {
                Some(t) => Value::Int(contains(t, JsonRef::new(&cand)) as i64),
                None => Value::Null,
            })
        }
        JsonFunc::ContainsPath => {
            let Some(d) = doc(&v[0], 0, f)? else {
                return Ok(Value::Null);
            };
            let all = one_or_all(&v[1], f)?;
            let Some(all) = all else {
                return Ok(Value::Null);
            };
            let root = JsonRef::new(&d);
            let mut found_all = true;
            let mut found_any = false;
            for p in &v[2..] {
                let Some(p) = path(p)? else {
                    return Ok(Value::Null);
                };
                let mut hits = Vec::new();
                json::seek(root, &p.legs, &mut hits);
                found_all &= !hits.is_empty();
                found_any |= !hits.is_empty();
            }
            Ok(Value::Int(if all { found_all } else { found_any } as i64))
        }
        JsonFunc::Set
        | JsonFunc::Insert
        | JsonFunc::Replace
        | JsonFunc::ArrayAppend
        | JsonFunc::ArrayInsert => {
            let Some(d) = doc(&v[0], 0, f)? else {
                return Ok(Value::Null);
            };
            let mut root = JsonRef::new(&d).to_node();
            for pair in v[1..].chunks(2) {
                let Some(p) = exact_path(&pair[0])? else {
                    return Ok(Value::Null);
                };
                let val = sql_to_node(&pair[1]);
                match f {
                    JsonFunc::ArrayAppend => {
                        if let Some(t) = node_at_mut(&mut root, &p.legs) {
                            match t {
                                Node::Array(items) => items.push(val),
                                other => {
                                    let old = std::mem::replace(other, Node::Null);
                                    *other = Node::Array(vec![old, val]);
                                }
                            }
                        }
                    }
                    JsonFunc::ArrayInsert => array_insert(&mut root, &p.legs, val)?,
                    _ => assign(&mut root, &p.legs, val, f),
                }
            }
            Ok(out(&root))
        }
        JsonFunc::Remove => {
            let Some(d) = doc(&v[0], 0, f)? else {
                return Ok(Value::Null);
            };
            let mut root = JsonRef::new(&d).to_node();
            for p in &v[1..] {
                let Some(p) = exact_path(p)? else {
                    return Ok(Value::Null);
                };
                let Some((last, parent)) = p.legs.split_last() else {
                    return Err(Error::Sql {
                        code: 3155,
                        sqlstate: *b"42000",
                        message: "The path expression '$' is not allowed in this context.".into(),
                    });
                };
                if let Some(parent) = node_at_mut(&mut root, parent) {
                    match (parent, last) {
                        (Node::Object(m), Leg::Key(k)) => {
                            if let Ok(i) = m.binary_search_by(|(x, _)| json::key_order(x, k)) {
                                m.remove(i);
                            }
                        }
                        (Node::Array(items), Leg::Index(_) | Leg::FromEnd(_)) => {
                            if let Some(i) = array_pos(items.len(), last) {
                                items.remove(i);
                            }
                        }
                        _ => {}
                    }
                }
            }
            Ok(out(&root))
        }
        JsonFunc::MergePreserve | JsonFunc::MergePatch => {
            let mut acc: Option<Node> = None;
            for (i, a) in v.iter().enumerate() {
                let Some(d) = doc(a, i, f)? else {
                    return Ok(Value::Null);
                };
                let n = JsonRef::new(&d).to_node();
                acc = Some(match acc {
                    None => n,
                    Some(prev) if f == JsonFunc::MergePatch => merge_patch(prev, n),
                    Some(prev) => merge_preserve(prev, n),
                });
            }
            Ok(acc.map_or(Value::Null, |n| out(&n)))
        }
        JsonFunc::Search => search(&v, f),
        JsonFunc::Pretty => Ok(match doc(&v[0], 0, f)? {
            Some(d) => {
                let mut s = String::new();
                pretty(JsonRef::new(&d), 0, &mut s);
                Value::Bytes(s.into_bytes())
            }
            None => Value::Null,
        }),
        JsonFunc::Overlaps => {
            let (Some(a), Some(b)) = (doc(&v[0], 0, f)?, doc(&v[1], 1, f)?) else {
                return Ok(Value::Null);
            };
            Ok(Value::Int(
                overlaps(JsonRef::new(&a), JsonRef::new(&b)) as i64
            ))
        }
        JsonFunc::MemberOf => {
            if v[0].is_null() {
                return Ok(Value::Null);
            }
            let Some(arr) = doc(&v[1], 1, f)? else {
                return Ok(Value::Null);
            };
            let needle = crate::types::value::sql_to_json(&v[0]);
            let (needle, arr) = (JsonRef::new(&needle), JsonRef::new(&arr));
            let hit = if arr.kind() == JsonType::Array {
                (0..arr.len())
                    .filter_map(|i| arr.index(i))
                    .any(|e| equal(e, needle))
            } else {
                equal(arr, needle)
            };
            Ok(Value::Int(hit as i64))
        }
    }
}

fn one_or_all(v: &Value, f: JsonFunc) -> Result<Option<bool>> {
    if v.is_null() {
        return Ok(None);
    }
    match v.to_display().to_ascii_lowercase().as_str() {
        "one" => Ok(Some(false)),
        "all" => Ok(Some(true)),
        _ => Err(Error::Sql {
            code: 3154,
            sqlstate: *b"42000",
            message: format!(
                "The oneOrAll argument to {} may take these values: 'one' or 'all'.",
                f.name()
            ),
        }),
    }
}

/// The first value a path reaches.
fn first<'a>(root: JsonRef<'a>, p: &Path) -> Option<JsonRef<'a>> {
    let mut hits = Vec::new();
    json::seek(root, &p.legs, &mut hits);
    hits.into_iter().next()
}

/// JSON_EXTRACT: one path without wildcards gives the value it reaches;
/// several paths, or one with wildcards, an array of every match.
fn extract(v: &[Value], f: JsonFunc) -> Result<Value> {
    let d = doc(&v[0], 0, f)?;
    let mut paths = Vec::new();
    for p in &v[1..] {
        match path(p)? {
            Some(p) => paths.push(p),
            None => return Ok(Value::Null),
        }
    }
    let Some(d) = d else {
        return Ok(Value::Null);
    };
    let root = JsonRef::new(&d);
    let mut hits = Vec::new();
    for p in &paths {
        json::seek(root, &p.legs, &mut hits);
    }
    if paths.len() == 1 && !paths[0].has_wildcard() {
        return Ok(hits
            .first()
            .map_or(Value::Null, |h| Value::Json(h.bytes().to_vec())));
    }
    if hits.is_empty() {
        return Ok(Value::Null);
    }
    Ok(out(&Node::Array(
        hits.iter().map(JsonRef::to_node).collect(),
    )))
}

/// JSON_UNQUOTE: a JSON string's text, another JSON value's text, a SQL
/// string in double quotes parsed as a JSON string, any other string as it is.
fn unquote(v: &Value, f: JsonFunc) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Json(j) => {
            let r = JsonRef::new(j);
            match r.as_str() {
                Some(s) => Value::str(s),
                None => Value::Bytes(r.text().into_bytes()),
            }
        }
        Value::Bytes(b) if b.len() >= 2 && b[0] == b'"' && b[b.len() - 1] == b'"' => {
            match json::parse(b) {
                Ok(Node::Str(s)) => Value::Bytes(s.into_bytes()),
                Ok(_) => v.clone(),
                Err(e) => return Err(json::invalid_text_in_arg(&e, 1, f.name())),
            }
        }
        other => Value::Bytes(other.to_bytes().unwrap_or_default()),
    })
}

/// MySQL's containment (JSON_CONTAINS): see the manual's four rules.
fn contains(t: JsonRef<'_>, c: JsonRef<'_>) -> bool {
    match (t.kind(), c.kind()) {
        (JsonType::Array, JsonType::Array) => (0..c.len())
            .filter_map(|i| c.index(i))
            .all(|ce| contains(t, ce)),
        (JsonType::Array, _) => (0..t.len())
            .filter_map(|i| t.index(i))
            .any(|te| contains(te, c)),
        (JsonType::Object, JsonType::Object) => {
            (0..c.len()).all(|i| t.get(c.key(i)).is_some_and(|tv| contains(tv, c.value(i))))
        }
        (JsonType::Object, _) | (_, JsonType::Object) | (_, JsonType::Array) => false,
        _ => equal(t, c),
    }
}

/// JSON equality: equal under MySQL's order and of comparable types.
fn equal(a: JsonRef<'_>, b: JsonRef<'_>) -> bool {
    json::compare(a, b) == std::cmp::Ordering::Equal && same_family(a, b)
}

/// JSON_OVERLAPS: two arrays share an element, two objects a key with equal
/// values, an array holds a scalar, or two scalars are equal.
fn overlaps(a: JsonRef<'_>, b: JsonRef<'_>) -> bool {
    match (a.kind(), b.kind()) {
        (JsonType::Array, JsonType::Array) => (0..a.len())
            .filter_map(|i| a.index(i))
            .any(|x| (0..b.len()).filter_map(|j| b.index(j)).any(|y| equal(x, y))),
        (JsonType::Array, _) => (0..a.len()).filter_map(|i| a.index(i)).any(|x| equal(x, b)),
        (_, JsonType::Array) => overlaps(b, a),
        (JsonType::Object, JsonType::Object) => {
            (0..a.len()).any(|i| b.get(a.key(i)).is_some_and(|y| equal(a.value(i), y)))
        }
        _ => equal(a, b),
    }
}

/// JSON_PRETTY's layout: one member or element a line, indented by two
/// spaces a level; empty containers stay `[]` / `{}`.
fn pretty(v: JsonRef<'_>, level: usize, out: &mut String) {
    let pad = |n: usize, out: &mut String| out.extend(std::iter::repeat_n("  ", n));
    match v.kind() {
        JsonType::Array if !v.is_empty() => {
            out.push_str("[\n");
            for i in 0..v.len() {
                if i > 0 {
                    out.push_str(",\n");
                }
                pad(level + 1, out);
                if let Some(e) = v.index(i) {
                    pretty(e, level + 1, out);
                }
            }
            out.push('\n');
            pad(level, out);
            out.push(']');
        }
        JsonType::Object if !v.is_empty() => {
            out.push_str("{\n");
            for i in 0..v.len() {
                if i > 0 {
                    out.push_str(",\n");
                }
                pad(level + 1, out);
                json::quote_into(v.key(i), out);
                out.push_str(": ");
                pretty(v.value(i), level + 1, out);
            }
            out.push('\n');
            pad(level, out);
            out.push('}');
        }
        _ => v.write_text(out),
    }
}

/// Scalars are comparable when both are numbers or both of one type.
fn same_family(a: JsonRef<'_>, b: JsonRef<'_>) -> bool {
    let num = |k: JsonType| {
        matches!(
            k,
            JsonType::Int | JsonType::UInt | JsonType::Double | JsonType::Decimal
        )
    };
    a.kind() == b.kind() || (num(a.kind()) && num(b.kind()))
}

/// The position an index leg names in an array of `len` (existing cells only).
fn array_pos(len: usize, leg: &Leg) -> Option<usize> {
    match leg {
        Leg::Index(n) if *n < len => Some(*n),
        Leg::FromEnd(n) => len.checked_sub(1 + n),
        _ => None,
    }
}

/// The node a wildcard-free path names, if it exists (an index leg on a
/// non-array names the value itself at 0 / last, as MySQL auto-wraps).
fn node_at_mut<'a>(n: &'a mut Node, legs: &[Leg]) -> Option<&'a mut Node> {
    let Some((leg, rest)) = legs.split_first() else {
        return Some(n);
    };
    let next = match (n, leg) {
        (Node::Object(m), Leg::Key(k)) => {
            let i = m.binary_search_by(|(x, _)| json::key_order(x, k)).ok()?;
            &mut m[i].1
        }
        (Node::Array(items), Leg::Index(_) | Leg::FromEnd(_)) => {
            let i = array_pos(items.len(), leg)?;
            &mut items[i]
        }
        (n, Leg::Index(0) | Leg::FromEnd(0)) if !matches!(n, Node::Array(_)) => n,
        _ => return None,
    };
    node_at_mut(next, rest)
}

/// JSON_SET / JSON_INSERT / JSON_REPLACE of one path.
fn assign(root: &mut Node, legs: &[Leg], val: Node, f: JsonFunc) {
    let (may_add, may_replace) = match f {
        JsonFunc::Set => (true, true),
        JsonFunc::Insert => (true, false),
        _ => (false, true),
    };
    let Some((last, parent)) = legs.split_last() else {
        if may_replace {
            *root = val;
        }
        return;
    };
    let Some(p) = node_at_mut(root, parent) else {
        return;
    };
    match (p, last) {
        (Node::Object(m), Leg::Key(k)) => {
            match m.binary_search_by(|(x, _)| json::key_order(x, k)) {
                Ok(i) if may_replace => m[i].1 = val,
                Err(i) if may_add => m.insert(i, (k.clone(), val)),
                _ => {}
            }
        }
        (Node::Array(items), Leg::Index(_) | Leg::FromEnd(_)) => {
            match array_pos(items.len(), last) {
                Some(i) if may_replace => items[i] = val,
                None if may_add && matches!(last, Leg::Index(_)) => items.push(val),
                _ => {}
            }
        }
        (p, Leg::Index(_) | Leg::FromEnd(_)) => {
            // A non-array read as a one-element array: [0] / [last] is the
            // value itself, a later index appends (wrapping it).
            if matches!(last, Leg::Index(0) | Leg::FromEnd(0)) {
                if may_replace {
                    *p = val;
                }
            } else if may_add && matches!(last, Leg::Index(_)) {
                let old = std::mem::replace(p, Node::Null);
                *p = Node::Array(vec![old, val]);
            }
        }
        _ => {}
    }
}

/// JSON_ARRAY_INSERT of one path: the last leg must be an array index
/// (3151), past the end appends.
fn array_insert(root: &mut Node, legs: &[Leg], val: Node) -> Result<()> {
    let Some((last @ (Leg::Index(_) | Leg::FromEnd(_)), parent)) = legs.split_last() else {
        return Err(Error::Sql {
            code: 3151,
            sqlstate: *b"42000",
            message: "A path expression is not a path to a cell in an array.".into(),
        });
    };
    if let Some(Node::Array(items)) = node_at_mut(root, parent) {
        let at = match last {
            Leg::Index(n) => (*n).min(items.len()),
            Leg::FromEnd(n) => items.len().saturating_sub(1 + n),
            _ => items.len(),
        };
        items.insert(at, val);
    }
    Ok(())
}

/// JSON_MERGE_PRESERVE of two values.
fn merge_preserve(a: Node, b: Node) -> Node {
    match (a, b) {
        (Node::Object(mut x), Node::Object(y)) => {
            for (k, v) in y {
                match x.binary_search_by(|(xk, _)| json::key_order(xk, &k)) {
                    Ok(i) => {
                        let old = std::mem::replace(&mut x[i].1, Node::Null);
                        x[i].1 = merge_preserve(old, v);
                    }
                    Err(i) => x.insert(i, (k, v)),
                }
            }
            Node::Object(x)
        }
        (a, b) => {
            let mut items = match a {
                Node::Array(items) => items,
                other => vec![other],
            };
            match b {
                Node::Array(more) => items.extend(more),
                other => items.push(other),
            }
            Node::Array(items)
        }
    }
}

/// JSON_MERGE_PATCH of two values (RFC 7396).
fn merge_patch(target: Node, patch: Node) -> Node {
    let Node::Object(patch) = patch else {
        return patch;
    };
    let mut t = match target {
        Node::Object(m) => m,
        _ => Vec::new(),
    };
    for (k, v) in patch {
        let at = t.binary_search_by(|(tk, _)| json::key_order(tk, &k));
        match (at, v) {
            (Ok(i), Node::Null) => {
                t.remove(i);
            }
            (Err(_), Node::Null) => {}
            (Ok(i), v) => {
                let old = std::mem::replace(&mut t[i].1, Node::Null);
                t[i].1 = merge_patch(old, v);
            }
            (Err(i), v) => {
                let merged = merge_patch(Node::Null, v);
                t.insert(i, (k, merged));
            }
        }
    }
    Node::Object(t)
}

/// JSON_SEARCH(doc, 'one' | 'all', pattern [, escape [, path ...]]).
fn search(v: &[Value], f: JsonFunc) -> Result<Value> {
    let Some(d) = doc(&v[0], 0, f)? else {
        return Ok(Value::Null);
    };
    let Some(all) = one_or_all(&v[1], f)? else {
        return Ok(Value::Null);
    };
    if v[2].is_null() {
        return Ok(Value::Null);
    }
    let pattern: Vec<char> = v[2].to_display().to_lowercase().chars().collect();
    let escape = match v.get(3) {
        None | Some(Value::Null) => '\\',
        Some(e) => e.to_display().chars().next().unwrap_or('\\'),
    };
    let root = JsonRef::new(&d);
    let mut starts: Vec<(JsonRef<'_>, Path)> = Vec::new();
    if v.len() > 4 {
        for p in &v[4..] {
            let Some(p) = exact_path(p)? else {
                return Ok(Value::Null);
            };
            if let Some(at) = first(root, &p) {
                starts.push((at, p));
            }
        }
    } else {
        starts.push((root, Path { legs: Vec::new() }));
    }
    let mut found: Vec<String> = Vec::new();
    for (at, p) in starts {
        let mut legs = p.legs.clone();
        walk_strings(at, &mut legs, &mut |s, legs| {
            if like(
                &s.to_lowercase().chars().collect::<Vec<_>>(),
                &pattern,
                escape,
            ) {
                let text = Path {
                    legs: legs.to_vec(),
                }
                .to_string();
                if !found.contains(&text) {
                    found.push(text);
                }
            }
        });
    }
    if found.is_empty() {
        return Ok(Value::Null);
    }
    if !all || found.len() == 1 {
        return Ok(out(&Node::Str(found.swap_remove(0))));
    }
    Ok(out(&Node::Array(
        found.into_iter().map(Node::Str).collect(),
    )))
}

/// Calls `f` on every string scalar under `v` with the path to it.
fn walk_strings(v: JsonRef<'_>, legs: &mut Vec<Leg>, f: &mut dyn FnMut(&str, &[Leg])) {
    match v.kind() {
        JsonType::Str => f(v.as_str().unwrap_or(""), legs),
        JsonType::Array => {
            for i in 0..v.len() {
                if let Some(e) = v.index(i) {
                    legs.push(Leg::Index(i));
                    walk_strings(e, legs, f);
                    legs.pop();
                }
            }
        }
        JsonType::Object => {
            for i in 0..v.len() {
                legs.push(Leg::Key(v.key(i).to_string()));
                walk_strings(v.value(i), legs, f);
                legs.pop();
            }
        }
        _ => {}
    }
}

/// SQL LIKE over characters: `%` any run, `_` one character, `escape`
/// quotes the next pattern character.
fn like(s: &[char], p: &[char], escape: char) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some(('%', rest)) => (0..=s.len()).any(|i| like(&s[i..], rest, escape)),
        Some(('_', rest)) => !s.is_empty() && like(&s[1..], rest, escape),
        Some((c, rest)) if *c == escape && !rest.is_empty() => {
            s.first() == Some(&rest[0]) && like(&s[1..], &rest[1..], escape)
        }
        Some((c, rest)) => s.first() == Some(c) && like(&s[1..], rest, escape),
    }
}
