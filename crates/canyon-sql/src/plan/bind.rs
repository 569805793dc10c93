//! The binder: sqlparser's AST to the bound tree ([`Expr`]). The
//! [`Binder`] resolves names against [`Scope`]s to frame positions and
//! function names to [`Func`]; placeholders are numbered in the order met;
//! literals are typed as MySQL types them ([`literal`], in
//! [`bind_literal`](super::bind_literal)).
//!
//! Binding is planning (SQLite keeps `resolve.c` apart from `expr.c` for the
//! same reason): a subquery in an expression is planned while the binder
//! meets it ([`Binder`]'s `subquery`, through
//! [`plan_subquery`](super::select::plan_subquery)), so the binder lives in
//! this layer, above the tree it builds (`crate::expr`). The collation rules
//! it applies to comparisons are in [`bind_collate`](super::bind_collate),
//! the forms with their own syntax that bind to functions (`d + INTERVAL n
//! DAY`, EXTRACT, ...) in [`bind_functions`](super::bind_functions).
//! `bind_inner` dispatches on the AST's node; the larger forms are bound by
//! one helper each.

use crate::catalog::Table;
use crate::expr::functions::{self, Func};
use crate::expr::rows::{check_row_operands, is_row_operand};
use crate::expr::{AggCall, AggFunc, BinOp, Expr, SubqueryExpr, SubqueryKind, MAX_DEPTH};
use crate::plan::bind_functions::bind_special;
use crate::plan::bind_literal::{is_utf8_introducer, literal};
use crate::plan::dml::PlanContext;
use crate::types::collation::Collation;
use crate::types::value::Value;
use crate::types::{ExprKind, SqlType};
use canyon_common::{Error, Result};
use sqlparser::ast;
use std::sync::Arc;

pub use crate::catalog::schema::{TableColumns, YearColumn};

/// One source whose columns names can resolve to: a table or derived table of
/// the query being bound, or of an enclosing query (for correlated subqueries).
#[derive(Debug, Clone)]
pub struct Scope {
    /// The name it is referred to by: its alias, or the table's name.
    pub qualifier: String,
    /// The table's database (empty for a derived table).
    pub db: String,
    /// Column names, in order.
    pub columns: Arc<[String]>,
    /// Column kinds, in order.
    pub kinds: Arc<[ExprKind]>,
    /// Column collations, in order (`None` for columns that are not strings).
    pub colls: Arc<[Option<Collation>]>,
    /// The type of each ENUM / SET / TIME column (`None` for others, and
    /// for the columns of derived sources): such a column reads as a number
    /// in a numeric context (see `bind_members`). May be shorter than `columns`.
    pub member_types: Arc<[Option<SqlType>]>,
    /// Each YEAR column's kind (`None` for other columns): a YEAR(2)
    /// column compared with a YEAR column compares years, and a keyed one
    /// compared with a constant in WHERE also compares years (see
    /// `bind_members`). May be shorter than `columns`.
    pub years: Arc<[Option<YearColumn>]>,
    /// Frame position of its first column.
    pub offset: usize,
    /// Columns (by index) merged into an earlier source's column of the same
    /// name by a USING or NATURAL join: an unqualified name means the earlier
    /// one (MySQL's coalesced column), so it is not ambiguous.
    pub coalesced: Vec<usize>,
    /// The base table's name and id, for a base table (MATCH looks its
    /// FULLTEXT indexes up in the catalog: `crate::plan::bind_match`; the id
    /// tells a temporary table from the base table it shadows).
    pub table_name: Option<(String, u32)>,
}

impl Scope {
    /// The scope of a table referred to as `alias` (or its name), at `offset`.
    pub fn of_table(table: &Table, alias: Option<&str>, offset: usize) -> Scope {
        let c = table
            .scope_columns
            .get_or_init(|| TableColumns::of(&table.def));
        Scope {
            qualifier: alias.unwrap_or(&table.def.name).to_string(),
            db: table.def.db.clone(),
            columns: c.columns.clone(),
            kinds: c.kinds.clone(),
            colls: c.colls.clone(),
            member_types: c.member_types.clone(),
            years: c.years.clone(),
            offset,
            coalesced: Vec::new(),
            table_name: Some((table.def.name.clone(), table.def.id)),
        }
    }

    fn find(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.eq_ignore_ascii_case(name))
            .map(|i| self.offset + i)
    }

    /// The scope of a derived source (a derived table, a set operation's
    /// result) with these output columns. A string column keeps its
    /// collation; `None` there means bytewise, kept as a bytewise collation.
    pub fn of_derived(
        qualifier: &str,
        columns: Vec<String>,
        kinds: &[ExprKind],
        colls: &[Option<Collation>],
        offset: usize,
    ) -> Scope {
        Scope {
            qualifier: qualifier.to_string(),
            db: String::new(),
            colls: (0..columns.len())
                .map(|i| {
                    (kinds.get(i) == Some(&ExprKind::String)).then(|| {
                        colls
                            .get(i)
                            .copied()
                            .flatten()
                            .unwrap_or(Collation::Utf8mb4_0900Bin)
                    })
                })
                .collect(),
            kinds: kinds.into(),
            member_types: Arc::default(),
            years: Arc::default(),
            columns: columns.into(),
            offset,
            coalesced: Vec::new(),
            table_name: None,
        }
    }

    /// The frame position of `name` written without a qualifier: a coalesced
    /// column is not found.
    pub fn find_unqualified(&self, name: &str) -> Option<usize> {
        self.find(name)
            .filter(|p| !self.coalesced.contains(&(p - self.offset)))
    }

    /// The frame position of `name` as written with (`qualified`) or without
    /// a table qualifier.
    fn lookup(&self, name: &str, qualified: bool) -> Option<usize> {
        if qualified {
            self.find(name)
        } else {
            self.find_unqualified(name)
        }
    }
}

/// Resolves names to frame positions and numbers placeholders.
///
/// # Collations
/// When it binds a comparison (`=`, `<`, `<=>`, ...), IN, BETWEEN, LIKE or a
/// CASE with an operand, the binder decides which collation compares the
/// strings, with MySQL's coercibility rules ([`Binder::derive`]): an explicit
/// COLLATE (level 0) beats a column (2), which beats a system constant (3),
/// which beats a literal, parameter or variable (4, the connection's
/// `collation_connection`); a binary string makes the comparison binary; two
/// different collations at the winning level are 1267. If any operand is not
/// a string the comparison follows MySQL's numeric and temporal rules and no
/// collation applies. A bytewise result (`binary`, `utf8mb4_0900_bin`) leaves
/// the operands bare — exactly Canyon's plain comparison — and any other
/// wraps *every* operand in [`Expr::Collate`], so the evaluator finds the
/// collation on either side and the planner can tell whether an index on a
/// column (keyed by that column's collation) serves the comparison.
///
/// A query block evaluates its expressions over a *frame*: the values of the
/// enclosing queries' frames (for correlated subqueries), then the columns of
/// each of its own sources. `Expr::Column(i)` is frame position `i`; a
/// single-table statement's frame is just the table's row.
pub struct Binder<'a> {
    /// The single table of a DML statement (or a single-table SELECT), if any.
    pub table: Option<&'a Table>,
    /// Visible sources: the enclosing queries' first, then this query's.
    pub scopes: Vec<Scope>,
    /// `scopes[own_from..]` are this query's sources.
    pub own_from: usize,
    /// Frame positions below this belong to enclosing queries.
    pub outer_len: usize,
    /// Frame width (where a subquery's own sources start).
    pub frame_len: usize,
    /// The smallest enclosing-frame position read (by this query or a nested
    /// subquery): `Some` means this query is correlated.
    pub min_outer_ref: Option<usize>,
    /// The planner, for subqueries (absent where subqueries are not allowed).
    pub plan_ctx: Option<&'a PlanContext<'a>>,
    /// Placeholders seen so far.
    pub params: usize,
    /// Aggregates collected, when aggregates are allowed.
    pub aggs: Vec<AggCall>,
    /// Whether aggregate functions may appear here.
    pub allow_aggs: bool,
    /// Whether window functions may appear here (the select list and ORDER
    /// BY of a query block; see `bind_window`).
    pub allow_windows: bool,
    /// The query block's WINDOW clause: (name, specification).
    pub named_windows: Vec<(String, ast::WindowSpec)>,
    /// The window whose specification is being bound (a window function
    /// there is 3595).
    pub window_spec: Option<String>,
    /// Where we are, for "Unknown column 'x' in '...'".
    pub context: &'static str,
    /// Output-column aliases visible here (GROUP BY, HAVING, ORDER BY), used
    /// for names that are not columns of the table.
    pub aliases: Vec<(String, Expr)>,
    /// Names an alias wins over a column of the same name for (HAVING, as
    /// MySQL: a select-list alias before a FROM column, except for names the
    /// GROUP BY lists as columns).
    pub alias_first: Vec<String>,
    /// The collation of literals, parameters and variables: the session's
    /// `collation_connection`.
    pub conn_coll: Collation,
    /// How deep the expression being bound nests (see [`MAX_DEPTH`]).
    pub(super) depth: usize,
}

impl<'a> Binder<'a> {
    /// A binder for expressions over `table` (referred to as `alias`): the
    /// frame is the table's row.
    pub fn new(table: Option<&'a Table>, table_alias: Option<&str>) -> Binder<'a> {
        let scopes: Vec<Scope> = table
            .map(|t| vec![Scope::of_table(t, table_alias, 0)])
            .unwrap_or_default();
        let frame_len = table.map(|t| t.def.columns.len()).unwrap_or(0);
        Binder {
            table,
            scopes,
            own_from: 0,
            outer_len: 0,
            frame_len,
            min_outer_ref: None,
            plan_ctx: None,
            params: 0,
            aggs: Vec::new(),
            allow_aggs: false,
            allow_windows: false,
            named_windows: Vec::new(),
            window_spec: None,
            context: "field list",
            aliases: Vec::new(),
            alias_first: Vec::new(),
            conn_coll: Collation::DEFAULT,
            depth: 0,
        }
    }

    /// The kind of every frame position (strings where no scope says).
    pub fn frame_kinds(&self) -> Vec<ExprKind> {
        let mut kinds = vec![ExprKind::String; self.frame_len];
        for s in &self.scopes {
            for (i, k) in s.kinds.iter().enumerate() {
                if let Some(slot) = kinds.get_mut(s.offset + i) {
                    *slot = *k;
                }
            }
        }
        kinds
    }

    /// Binds one expression.
    pub fn bind(&mut self, e: &ast::Expr) -> Result<Expr> {
        crate::parse::limits::check_stack()?;
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.depth -= 1;
            return Err(Error::TooDeep);
        }
        let r = self.bind_inner(e);
        self.depth -= 1;
        r
    }

    fn boxed(&mut self, e: &ast::Expr) -> Result<Box<Expr>> {
        Ok(Box::new(self.bind(e)?))
    }

    /// Whether `name` is a column of one of this query's own sources.
    pub fn is_own_column(&self, name: &str) -> bool {
        self.scopes[self.own_from..]
            .iter()
            .any(|s| s.find(name).is_some())
    }

    fn column(&mut self, parts: &[&ast::Ident]) -> Result<Expr> {
        let display = parts
            .iter()
            .map(|p| p.value.as_str())
            .collect::<Vec<_>>()
            .join(".");
        let unknown = || Error::UnknownColumn {
            column: display.clone(),
            context: self.context.to_string(),
        };
        let (db, qualifier, name) = match parts {
            [c] => (None, None, &c.value),
            [t, c] => (None, Some(&t.value), &c.value),
            [d, t, c] => (Some(&d.value), Some(&t.value), &c.value),
            _ => return Err(unknown()),
        };
        let matches = |s: &Scope| {
            qualifier.is_none_or(|q| *q == s.qualifier) && db.is_none_or(|d| *d == s.db)
        };
        // This query's sources first: a name found in two is ambiguous.
        let mut found = None;
        for s in &self.scopes[self.own_from..] {
            if !matches(s) {
                continue;
            }
            if let Some(pos) = s.lookup(name, qualifier.is_some()) {
                if found.is_some() {
                    return Err(Error::AmbiguousColumn {
                        column: display.clone(),
                        context: self.context.to_string(),
                    });
                }
                found = Some(pos);
            }
        }
        if let Some(pos) = found {
            return Ok(Expr::Column(pos));
        }
        // Then the enclosing queries', innermost first: a correlated reference.
        for s in self.scopes[..self.own_from].iter().rev() {
            if matches(s) {
                if let Some(pos) = s.lookup(name, qualifier.is_some()) {
                    self.min_outer_ref = Some(self.min_outer_ref.map_or(pos, |m| m.min(pos)));
                    return Ok(Expr::Column(pos));
                }
            }
        }
        if name.eq_ignore_ascii_case("_rowid") {
            if let Some(e) = self.rowid(&matches)? {
                return Ok(e);
            }
        }
        Err(unknown())
    }

    /// `_rowid` (no column has the name): the row-id column of the one
    /// matching base table of this query that has one (see [`rowid_column`]),
    /// else of an enclosing query's; `None` when no table has one (1054).
    #[inline(never)]
    fn rowid(&mut self, matches: &dyn Fn(&Scope) -> bool) -> Result<Option<Expr>> {
        let rowid_of = |s: &Scope| -> Option<usize> {
            let (name, id) = s.table_name.as_ref()?;
            let table = self.plan_ctx?.catalog.table(&s.db, name)?;
            (table.def.id == *id)
                .then(|| rowid_column(&table.def))
                .flatten()
                .map(|c| s.offset + c)
        };
        let mut found = None;
        for s in self.scopes[self.own_from..].iter().filter(|s| matches(s)) {
            if let Some(pos) = rowid_of(s) {
                if found.is_some() {
                    return Err(Error::AmbiguousColumn {
                        column: "_rowid".into(),
                        context: self.context.to_string(),
                    });
                }
                found = Some(pos);
            }
        }
        if let Some(pos) = found {
            return Ok(Some(Expr::Column(pos)));
        }
        let outer = self.scopes[..self.own_from]
            .iter()
            .rev()
            .filter(|s| matches(s))
            .find_map(rowid_of);
        Ok(outer.map(|pos| {
            self.min_outer_ref = Some(self.min_outer_ref.map_or(pos, |m| m.min(pos)));
            Expr::Column(pos)
        }))
    }

    fn bind_inner(&mut self, e: &ast::Expr) -> Result<Expr> {
        use ast::Expr as A;
        // Forms whose binding belongs with their functions (INTERVAL arithmetic,
        // EXTRACT, ...).
        if let Some(r) = bind_special(self, e) {
            return r;
        }
        Ok(match e {
            A::MatchAgainst {
                columns,
                match_value,
                opt_search_modifier,
            } => crate::plan::bind_match::bind_match(
                self,
                columns,
                &match_value.value,
                opt_search_modifier.clone(),
            )?,
            A::Identifier(id) => self.bind_identifier(id)?,
            A::CompoundIdentifier(parts) => self.bind_compound_identifier(parts)?,
            A::Value(v) => self.bind_value(&v.value)?,
            A::TypedString(ts) => {
                let text = match &ts.value.value {
                    ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                        s.clone()
                    }
                    other => other.to_string(),
                };
                let v = Value::str(&text);
                match ts.data_type {
                    ast::DataType::Date => Expr::Func(Func::CastDate, vec![Expr::Literal(v)]),
                    ast::DataType::Timestamp(..) | ast::DataType::Datetime(_) => {
                        Expr::Func(Func::CastDateTime, vec![Expr::Literal(v)])
                    }
                    _ => Expr::Literal(v),
                }
            }
            A::Nested(inner) => self.bind(inner)?,
            A::UnaryOp { op, expr } => self.bind_unary(op, expr)?,
            A::BinaryOp { left, op, right } => self.bind_binary(left, op, right)?,
            A::MemberOf(m) => self.bind_member_of(m)?,
            A::IsNull(e) => Expr::IsNull(self.boxed(e)?, false),
            A::IsNotNull(e) => Expr::IsNull(self.boxed(e)?, true),
            A::IsTrue(e) => Expr::IsBool(self.boxed(e)?, true, false),
            A::IsNotTrue(e) => Expr::IsBool(self.boxed(e)?, true, true),
            A::IsFalse(e) => Expr::IsBool(self.boxed(e)?, false, false),
            A::IsNotFalse(e) => Expr::IsBool(self.boxed(e)?, false, true),
            A::IsUnknown(e) => Expr::IsNull(self.boxed(e)?, false),
            A::IsNotUnknown(e) => Expr::IsNull(self.boxed(e)?, true),
            A::IsNotDistinctFrom(a, b) => {
                let mut a = self.boxed(a)?;
                let mut b = self.boxed(b)?;
                self.collate_pair(&mut a, &mut b, "<=>")?;
                Expr::Binary(BinOp::NullSafeEq, a, b)
            }
            A::IsDistinctFrom(a, b) => {
                let mut a = self.boxed(a)?;
                let mut b = self.boxed(b)?;
                self.collate_pair(&mut a, &mut b, "<=>")?;
                Expr::Not(Box::new(Expr::Binary(BinOp::NullSafeEq, a, b)))
            }
            A::InList {
                expr,
                list,
                negated,
            } => self.bind_in_list(expr, list, *negated)?,
            A::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let mut e = self.boxed(expr)?;
                let mut lo = self.boxed(low)?;
                let mut hi = self.boxed(high)?;
                self.collate(&mut [e.as_mut(), lo.as_mut(), hi.as_mut()], "between")?;
                // Read as `e >= lo AND e <= hi` are: a TIME column between
                // numbers or strings compares as times, an ENUM / SET
                // between numbers by index / bitmask, a YEAR column between
                // constants reads them as years.
                let range = self.year_between(&mut e, &mut lo, &mut hi);
                let mut bounds = [*lo, *hi];
                self.member_in_list(&mut e, &mut bounds);
                let [lo, hi] = bounds;
                let between = Expr::Between(e, Box::new(lo), Box::new(hi), *negated);
                match range {
                    // A keyed YEAR(2) column (`bind_members`): the key's
                    // range first; NOT BETWEEN takes none.
                    Some(range) if !*negated => {
                        Expr::Binary(BinOp::And, Box::new(range), Box::new(between))
                    }
                    _ => between,
                }
            }
            A::Like {
                negated,
                any: false,
                expr,
                pattern,
                escape_char,
            } => self.bind_like(expr, pattern, escape_char, *negated)?,
            A::Case {
                operand,
                conditions,
                else_result,
                ..
            } => self.bind_case(operand, conditions, else_result)?,
            A::Function(f) => self.bind_function(f)?,
            A::Cast {
                expr, data_type, ..
            }
            | A::Convert {
                expr,
                data_type: Some(data_type),
                ..
            } => self.bind_cast(expr, data_type)?,
            A::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => self.bind_substring(expr, substring_from, substring_for)?,
            A::Trim {
                expr,
                trim_where,
                trim_what,
                ..
            } => self.bind_trim(expr, trim_where, trim_what)?,
            A::Ceil { expr, .. } => Expr::Func(Func::Ceil, vec![self.bind(expr)?]),
            A::Floor { expr, .. } => Expr::Func(Func::Floor, vec![self.bind(expr)?]),
            A::Tuple(items) => Expr::Row(
                items
                    .iter()
                    .map(|x| self.bind(x))
                    .collect::<Result<Vec<_>>>()?,
            ),
            A::Subquery(q) => self.subquery(q, SubqueryKind::Scalar)?,
            A::Exists { subquery, negated } => {
                self.subquery(subquery, SubqueryKind::Exists(*negated))?
            }
            A::InSubquery {
                expr,
                subquery,
                negated,
            } => {
                refuse_limit(subquery)?;
                let lhs = match self.bind(expr)? {
                    Expr::Row(items) => items,
                    one => vec![one],
                };
                self.subquery(subquery, SubqueryKind::In(lhs, *negated))?
            }
            A::AnyOp { .. } | A::AllOp { .. } => self.bind_quantified(e)?,
            // Character set introducers on literals (`_binary'...'`, `_utf8mb4'...'`),
            // which drivers put before interpolated parameters: with one character
            // set a literal's bytes are the same under any of these.
            A::Prefixed { prefix, value } if is_utf8_introducer(&prefix.value) => {
                let lit = match value.as_ref() {
                    A::Value(v) => Expr::Literal(literal(&v.value)?),
                    other => return Err(Error::Unsupported(format!("expression {other}"))),
                };
                if prefix.value.eq_ignore_ascii_case("_binary") {
                    // A binary string: it compares bytewise.
                    Expr::Collate(Box::new(lit), Collation::Binary)
                } else {
                    lit
                }
            }
            // `_latin1'…'`, `_cp1251 X'CF'`: introducers of the other
            // character sets Canyon converts. The statement text reached the
            // parser as UTF-8 (converted from character_set_client), so a
            // quoted literal is its characters, limited to the set's (`?` for
            // the others); a hex literal is bytes in the set, decoded. MySQL
            // reads a quoted literal's *bytes* in the introducer's set, which
            // is the same when the introducer names the client's set.
            A::Prefixed { prefix, value }
                if crate::types::charset::Charset::from_name(
                    prefix.value.strip_prefix('_').unwrap_or(""),
                )
                .is_some() =>
            {
                let cs = crate::types::charset::Charset::from_name(&prefix.value[1..])
                    .expect("matched just above");
                let A::Value(v) = value.as_ref() else {
                    return Err(Error::Unsupported(format!("expression {value}")));
                };
                let hex = matches!(v.value, ast::Value::HexStringLiteral(_));
                match literal(&v.value)? {
                    Value::Bytes(b) => Expr::Literal(Value::str(&match std::str::from_utf8(&b) {
                        Ok(text) if !hex => cs.restrict(text).into_owned(),
                        _ => cs.decode(&b).into_owned(),
                    })),
                    other => Expr::Literal(other),
                }
            }
            A::Collate { expr, collation } => self.bind_collate(expr, collation)?,
            A::Interval(_) => return Err(Error::Unsupported("INTERVAL expressions".into())),
            other => return Err(Error::Unsupported(format!("expression {other}"))),
        })
    }

    /// A bare name: a system or user variable, a `"string"`, an alias or a
    /// column.
    fn bind_identifier(&mut self, id: &ast::Ident) -> Result<Expr> {
        Ok(if let Some(v) = id.value.strip_prefix("@@") {
            Expr::SysVar(strip_scope(v))
        } else if let Some(v) = id.value.strip_prefix('@') {
            Expr::UserVar(v.to_ascii_lowercase())
        } else if id.quote_style == Some('"') && !self.is_own_column(&id.value) {
            // In MySQL's default sql_mode "..." is a string literal.
            Expr::Literal(Value::str(&id.value))
        } else if let Some((_, aliased)) = self
            .alias_first
            .iter()
            .any(|n| n.eq_ignore_ascii_case(&id.value))
            .then(|| {
                self.aliases
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(&id.value))
            })
            .flatten()
        {
            aliased.clone()
        } else {
            match self.column(&[id]) {
                Ok(c) => c,
                Err(e) => match self
                    .aliases
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(&id.value))
                {
                    Some((_, aliased)) => aliased.clone(),
                    None => return Err(e),
                },
            }
        })
    }

    /// A dotted name: `@@global.x` or a qualified column.
    fn bind_compound_identifier(&mut self, parts: &[ast::Ident]) -> Result<Expr> {
        Ok(
            if let Some(first) = parts.first().and_then(|p| p.value.strip_prefix("@@")) {
                // @@session.x / @@global.x
                let name = parts
                    .last()
                    .map(|p| p.value.to_ascii_lowercase())
                    .unwrap_or_default();
                if first.eq_ignore_ascii_case("global") {
                    Expr::SysVar(format!("global.{name}"))
                } else {
                    Expr::SysVar(name)
                }
            } else {
                let refs: Vec<&ast::Ident> = parts.iter().collect();
                self.column(&refs)?
            },
        )
    }

    /// A literal, or a placeholder (a `?`, or a user variable sqlparser reads
    /// as one).
    fn bind_value(&mut self, v: &ast::Value) -> Result<Expr> {
        Ok(match v {
            ast::Value::Placeholder(p) if p == "?" => {
                let i = self.params;
                self.params += 1;
                Expr::Param(i)
            }
            // sqlparser reads `@` before a quoted name (`@`my var``) as a
            // placeholder; in MySQL it is a user variable. (Found by the
            // `sql` fuzz target: it was numbered as a `?`, which broke
            // the select list's placeholder numbering, 1105.)
            ast::Value::Placeholder(p) if p.starts_with('@') && !p.starts_with("@@") => {
                Expr::UserVar(p[1..].to_ascii_lowercase())
            }
            ast::Value::Placeholder(p) => return Err(Error::Syntax(p.clone())),
            // X'..' is a binary string: it compares bytewise, unless a
            // column's collation wins (see `Binder::derive`).
            hex @ ast::Value::HexStringLiteral(_) => {
                Expr::Collate(Box::new(Expr::Literal(literal(hex)?)), Collation::Binary)
            }
            other => Expr::Literal(literal(other)?),
        })
    }

    /// A unary operator.
    fn bind_unary(&mut self, op: &ast::UnaryOperator, expr: &ast::Expr) -> Result<Expr> {
        Ok(match op {
            ast::UnaryOperator::Minus => match self.bind(expr).map(|e| self.numeric_reading(e))? {
                Expr::Literal(Value::Int(i)) => Expr::Literal(Value::Int(-i)),
                Expr::Literal(Value::UInt(u)) if u == 1u64 << 63 => {
                    Expr::Literal(Value::Int(i64::MIN))
                }
                // Past BIGINT: a negative DECIMAL literal, as MySQL's lexer
                // reads `-9223372036854775809` (not a BIGINT UNSIGNED negated,
                // which would be 1690).
                Expr::Literal(Value::UInt(u)) if u > 1u64 << 63 => {
                    Expr::Literal(Value::Decimal(-crate::types::decimal::Decimal::from(u)))
                }
                // A zero stays positive (MySQL's my_decimal_neg): `-0.0` is 0.0.
                Expr::Literal(Value::Decimal(d)) if !d.is_zero() => {
                    Expr::Literal(Value::Decimal(-d))
                }
                Expr::Literal(Value::Double(d)) => Expr::Literal(Value::Double(-d)),
                other => Expr::Neg(Box::new(other)),
            },
            ast::UnaryOperator::Plus => self.bind(expr)?,
            ast::UnaryOperator::Not | ast::UnaryOperator::BangNot => Expr::Not(self.boxed(expr)?),
            ast::UnaryOperator::BitwiseNot => {
                let e = match bit_literal_number(expr) {
                    Some(n) => n,
                    None => self.bind(expr)?,
                };
                Expr::BitNot(Box::new(self.numeric_reading(e)))
            }
            other => return Err(Error::Unsupported(format!("operator {other}"))),
        })
    }

    /// A binary operator; a comparison decides its collation.
    fn bind_binary(
        &mut self,
        left: &ast::Expr,
        op: &ast::BinaryOperator,
        right: &ast::Expr,
    ) -> Result<Expr> {
        if let ast::BinaryOperator::Arrow | ast::BinaryOperator::LongArrow = op {
            return self.bind_arrow(left, op, right);
        }
        if let ast::BinaryOperator::Assignment = op {
            // `@v := expr`: sets the user variable as it is evaluated
            // (`update t set b = (@n := @n + 1)` numbers the rows).
            return match self.bind(left)? {
                Expr::UserVar(name) => Ok(Expr::Func(
                    Func::SetUserVar,
                    vec![Expr::Literal(Value::str(&name)), self.bind(right)?],
                )),
                _ => Err(Error::Syntax(":=".into())),
            };
        }
        let op = match op {
            ast::BinaryOperator::Plus => BinOp::Add,
            ast::BinaryOperator::Minus => BinOp::Sub,
            ast::BinaryOperator::Multiply => BinOp::Mul,
            ast::BinaryOperator::Divide => BinOp::Div,
            ast::BinaryOperator::Modulo => BinOp::Mod,
            ast::BinaryOperator::MyIntegerDivide | ast::BinaryOperator::DuckIntegerDivide => {
                BinOp::IntDiv
            }
            ast::BinaryOperator::Eq => BinOp::Eq,
            ast::BinaryOperator::Spaceship => BinOp::NullSafeEq,
            ast::BinaryOperator::NotEq => BinOp::Ne,
            ast::BinaryOperator::Lt => BinOp::Lt,
            ast::BinaryOperator::LtEq => BinOp::Le,
            ast::BinaryOperator::Gt => BinOp::Gt,
            ast::BinaryOperator::GtEq => BinOp::Ge,
            ast::BinaryOperator::And => BinOp::And,
            ast::BinaryOperator::Or | ast::BinaryOperator::StringConcat => BinOp::Or,
            ast::BinaryOperator::Xor => BinOp::Xor,
            ast::BinaryOperator::BitwiseAnd => BinOp::BitAnd,
            ast::BinaryOperator::BitwiseOr => BinOp::BitOr,
            ast::BinaryOperator::BitwiseXor => BinOp::BitXor,
            ast::BinaryOperator::PGBitwiseShiftLeft => BinOp::Shl,
            ast::BinaryOperator::PGBitwiseShiftRight => BinOp::Shr,
            other => return Err(Error::Unsupported(format!("operator {other}"))),
        };
        let numeric = !op.is_comparison() && !matches!(op, BinOp::And | BinOp::Or | BinOp::Xor);
        if op.is_comparison() {
            if let Some(e) = self.bind_row_comparison(op, left, right)? {
                return Ok(e);
            }
        }
        let mut l = match bit_literal_number(left).filter(|_| numeric) {
            Some(n) => Box::new(n),
            None => self.boxed(left)?,
        };
        let mut r = match bit_literal_number(right).filter(|_| numeric) {
            Some(n) => Box::new(n),
            None => self.boxed(right)?,
        };
        if !numeric {
            // Compared with a number (a BIT column: `c1 = b'101'`), a hex or
            // bit-value literal is its integer too.
            if let Some(n) = bit_literal_number(left).filter(|_| self.is_numeric(&r)) {
                *l = n;
            }
            if let Some(n) = bit_literal_number(right).filter(|_| self.is_numeric(&l)) {
                *r = n;
            }
        }
        let range = self.member_operands(op, &mut l, &mut r);
        if op.is_comparison() {
            self.collate_pair(&mut l, &mut r, op.symbol())?;
        }
        Ok(with_key_range(range, Expr::Binary(op, l, r)))
    }

    /// MySQL's `col->'path'` is JSON_EXTRACT(col, 'path'), `col->>'path'`
    /// JSON_UNQUOTE(JSON_EXTRACT(col, 'path')). (MySQL takes only a column
    /// on the left and a string literal on the right; Canyon takes any
    /// expressions.) Apart from `bind_binary`, and not inlined, so that the
    /// recursive binder's frames stay small.
    #[inline(never)]
    fn bind_arrow(
        &mut self,
        left: &ast::Expr,
        op: &ast::BinaryOperator,
        right: &ast::Expr,
    ) -> Result<Expr> {
        use crate::expr::functions_json::JsonFunc;
        let extract = Expr::Func(
            Func::Json(JsonFunc::Extract),
            vec![self.bind(left)?, self.bind(right)?],
        );
        Ok(match op {
            ast::BinaryOperator::Arrow => extract,
            _ => Expr::Func(Func::Json(JsonFunc::Unquote), vec![extract]),
        })
    }

    /// `value MEMBER OF (json_array)` (MySQL 8.0.17); not inlined (see
    /// `bind_arrow`).
    #[inline(never)]
    fn bind_member_of(&mut self, m: &ast::MemberOf) -> Result<Expr> {
        Ok(Expr::Func(
            Func::Json(crate::expr::functions_json::JsonFunc::MemberOf),
            vec![self.bind(&m.value)?, self.bind(&m.array)?],
        ))
    }

    /// `expr [NOT] IN (list)`, collated as one operation (component-wise for
    /// row values).
    fn bind_in_list(
        &mut self,
        expr: &ast::Expr,
        list: &[ast::Expr],
        negated: bool,
    ) -> Result<Expr> {
        let mut e = self.boxed(expr)?;
        // A hex or bit-value literal in the list of a number (a BIT column:
        // `c1 IN (b'001', b'101')`) is its integer, as in `bind_binary`.
        let numeric = !is_row_operand(&e) && self.is_numeric(&e);
        let mut list = list
            .iter()
            .map(|x| match bit_literal_number(x).filter(|_| numeric) {
                Some(n) => Ok(n),
                None => self.bind(x),
            })
            .collect::<Result<Vec<_>>>()?;
        if is_row_operand(&e) || list.iter().any(is_row_operand) {
            // Every element of the list has the left operand's shape (1241).
            for item in &list {
                check_row_operands(&e, item)?;
            }
        }
        if let Expr::Row(items) = e.as_mut() {
            // Component-wise: column i against the i-th of every row.
            for (i, item) in items.iter_mut().enumerate() {
                let mut ops: Vec<&mut Expr> = vec![item];
                let mut all_rows = true;
                for r in list.iter_mut() {
                    match r {
                        Expr::Row(vals) if i < vals.len() => ops.push(&mut vals[i]),
                        _ => all_rows = false,
                    }
                }
                if all_rows {
                    self.collate(&mut ops, "in")?;
                }
            }
        } else {
            self.member_in_list(&mut e, &mut list);
            let mut ops: Vec<&mut Expr> = vec![e.as_mut()];
            ops.extend(list.iter_mut());
            self.collate(&mut ops, "in")?;
        }
        Ok(Expr::InList(e, list, negated))
    }

    /// `expr [NOT] LIKE pattern [ESCAPE c]`.
    fn bind_like(
        &mut self,
        expr: &ast::Expr,
        pattern: &ast::Expr,
        escape_char: &Option<Box<ast::Expr>>,
        negated: bool,
    ) -> Result<Expr> {
        let mut e = self.boxed(expr)?;
        let mut p = self.boxed(pattern)?;
        self.collate(&mut [e.as_mut(), p.as_mut()], "like")?;
        let esc = match escape_char.as_deref() {
            None => b'\\',
            Some(ast::Expr::Value(v)) => match &v.value {
                ast::Value::SingleQuotedString(s) if s.len() == 1 => s.as_bytes()[0],
                _ => return Err(Error::WrongArguments("ESCAPE".into())),
            },
            Some(_) => return Err(Error::WrongArguments("ESCAPE".into())),
        };
        Ok(Expr::Like(e, p, esc, negated))
    }

    /// CASE: with an operand, its comparisons are collated as one operation;
    /// the results are conformed to one type.
    fn bind_case(
        &mut self,
        operand: &Option<Box<ast::Expr>>,
        conditions: &[ast::CaseWhen],
        else_result: &Option<Box<ast::Expr>>,
    ) -> Result<Expr> {
        let mut operand = operand.as_ref().map(|o| self.boxed(o)).transpose()?;
        let mut whens = Vec::with_capacity(conditions.len());
        for w in conditions {
            let c = self.bind(&w.condition)?;
            let r = self.bind(&w.result)?;
            whens.push((c, r));
        }
        if let Some(o) = operand.as_mut() {
            let mut ops: Vec<&mut Expr> = vec![o.as_mut()];
            ops.extend(whens.iter_mut().map(|(c, _)| c));
            self.collate(&mut ops, "case")?;
        }
        let mut otherwise = else_result.as_ref().map(|o| self.boxed(o)).transpose()?;
        let mut results: Vec<&mut Expr> = whens.iter_mut().map(|(_, r)| r).collect();
        results.extend(otherwise.as_deref_mut());
        self.conform(results);
        Ok(Expr::Case {
            operand,
            whens,
            otherwise,
        })
    }

    /// CAST(x AS type) / CONVERT(x, type).
    fn bind_cast(&mut self, expr: &ast::Expr, data_type: &ast::DataType) -> Result<Expr> {
        let inner = self.bind(expr)?;
        let func = functions::cast_func(data_type)?;
        // A cast to a number reads an ENUM / SET column as one.
        let inner = match func {
            Func::CastSigned | Func::CastUnsigned | Func::CastDouble | Func::CastDecimal(..) => {
                self.numeric_reading(inner)
            }
            _ => inner,
        };
        let cast = Expr::Func(func, vec![inner]);
        Ok(if matches!(data_type, ast::DataType::Binary(_)) {
            // CAST(x AS BINARY) is a binary string: it compares bytewise.
            Expr::Collate(Box::new(cast), Collation::Binary)
        } else {
            cast
        })
    }

    /// SUBSTRING(x FROM a FOR b) and its comma form.
    fn bind_substring(
        &mut self,
        expr: &ast::Expr,
        substring_from: &Option<Box<ast::Expr>>,
        substring_for: &Option<Box<ast::Expr>>,
    ) -> Result<Expr> {
        let mut args = vec![self.bind(expr)?];
        if let Some(f) = substring_from {
            args.push(self.bind(f)?);
        } else {
            args.push(Expr::Literal(Value::Int(1)));
        }
        if let Some(f) = substring_for {
            args.push(self.bind(f)?);
        }
        Ok(Expr::Func(Func::Substring, args))
    }

    /// TRIM([LEADING | TRAILING | BOTH] [what FROM] x).
    fn bind_trim(
        &mut self,
        expr: &ast::Expr,
        trim_where: &Option<ast::TrimWhereField>,
        trim_what: &Option<Box<ast::Expr>>,
    ) -> Result<Expr> {
        let e = self.bind(expr)?;
        let what = trim_what.as_ref().map(|w| self.bind(w)).transpose()?;
        let f = match trim_where {
            Some(ast::TrimWhereField::Leading) => Func::LTrim,
            Some(ast::TrimWhereField::Trailing) => Func::RTrim,
            _ => Func::Trim,
        };
        let mut args = vec![e];
        args.extend(what);
        Ok(Expr::Func(f, args))
    }

    /// `expr COLLATE name`: the explicit collation (coercibility 0); an
    /// unknown one is MySQL's 1273.
    fn bind_collate(&mut self, expr: &ast::Expr, collation: &ast::ObjectName) -> Result<Expr> {
        let name = collation.to_string().trim_matches('`').to_ascii_lowercase();
        let c = Collation::from_name(&name).ok_or(Error::UnknownCollation(name))?;
        let mut inner = self.bind(expr)?;
        // The collation must be of the operand's character set (a
        // literal's is the connection's): 1253 otherwise.
        // One exception: a utf8mb3 collation applies to a utf8mb4
        // string. MySQL's information_schema columns are utf8mb3 and
        // Connector/J's metadata queries put utf8mb3 collations on
        // them; Canyon's are utf8mb4 (every string is UTF-8 here).
        if let Some((have, _)) = self.derive(&inner) {
            let narrowing = have.charset() == "utf8mb4" && c.charset() == "utf8mb3";
            if have.charset() != c.charset() && !narrowing {
                return Err(Error::CollationCharsetMismatch {
                    collation: c.name().to_string(),
                    charset: have.charset().to_string(),
                });
            }
        }
        while let Expr::Collate(x, _) = inner {
            inner = *x;
        }
        Ok(Expr::Collate(Box::new(inner), c))
    }

    /// An aggregate call's `Expr::Agg`, reusing an identical earlier call.
    fn add_agg(&mut self, call: AggCall) -> Expr {
        let idx = match self.aggs.iter().position(|a| *a == call) {
            Some(i) => i,
            None => {
                self.aggs.push(call);
                self.aggs.len() - 1
            }
        };
        Expr::Agg(idx)
    }

    /// `GROUP_CONCAT([DISTINCT] expr [, expr ...] [ORDER BY key [ASC | DESC],
    /// ...] [SEPARATOR 'sep'])`. Several arguments are one CONCAT of them:
    /// CONCAT is NULL when any part is, and GROUP_CONCAT skips exactly those
    /// rows. DISTINCT compares that concatenation (MySQL compares the
    /// argument tuple; the two differ only for tuples whose concatenations
    /// coincide, `('a', 'bc')` and `('ab', 'c')`). A positional ORDER BY
    /// (`ORDER BY 1`) is not read as a position.
    fn bind_group_concat(
        &mut self,
        f: &ast::Function,
        args: &[&ast::FunctionArg],
        distinct: bool,
    ) -> Result<Expr> {
        let mut parts = Vec::with_capacity(args.len());
        // An aggregate's arguments cannot themselves hold aggregates.
        self.allow_aggs = false;
        let bound = (|| -> Result<()> {
            for a in args {
                match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                        parts.push(self.bind(e)?)
                    }
                    _ => return Err(Error::Syntax("GROUP_CONCAT(...)".into())),
                }
            }
            Ok(())
        })();
        let mut order = Vec::new();
        let mut separator = b",".to_vec();
        let clauses = match &f.args {
            ast::FunctionArguments::List(l) => l.clauses.as_slice(),
            _ => &[],
        };
        let clauses_bound = bound.and_then(|()| {
            for c in clauses {
                match c {
                    ast::FunctionArgumentClause::OrderBy(keys) => {
                        for k in keys {
                            let e = self.bind(&k.expr)?;
                            let coll = self.derive(&e).map(|d| d.0).filter(|c| !c.is_bytewise());
                            let desc = matches!(k.options.sort, Some(ast::OrderBySort::Desc));
                            order.push((e, desc, coll));
                        }
                    }
                    ast::FunctionArgumentClause::Separator(v) => {
                        separator = match &v.value {
                            ast::Value::SingleQuotedString(s)
                            | ast::Value::DoubleQuotedString(s) => s.as_bytes().to_vec(),
                            other => return Err(Error::Syntax(format!("SEPARATOR {other}"))),
                        }
                    }
                    other => return Err(Error::Unsupported(format!("GROUP_CONCAT(... {other})"))),
                }
            }
            Ok(())
        });
        self.allow_aggs = true;
        clauses_bound?;
        let arg = match parts.len() {
            0 => return Err(Error::Syntax("GROUP_CONCAT()".into())),
            1 => parts.pop().expect("one part"),
            _ => Expr::Func(functions::Func::Concat, parts),
        };
        let coll = self.derive(&arg).map(|d| d.0).filter(|c| !c.is_bytewise());
        Ok(self.add_agg(AggCall {
            func: AggFunc::GroupConcat,
            arg: Some(arg),
            distinct,
            coll,
            order,
            separator,
            window: None,
        }))
    }

    fn bind_function(&mut self, f: &ast::Function) -> Result<Expr> {
        if is_row_constructor(f) {
            return self.bind_row_constructor(f);
        }
        let name = f
            .name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .map(|i| i.value.to_ascii_uppercase())
            .unwrap_or_default();
        let (args, distinct) = match &f.args {
            ast::FunctionArguments::None => (Vec::new(), false),
            ast::FunctionArguments::List(l) => (
                l.args.iter().collect::<Vec<_>>(),
                matches!(
                    l.duplicate_treatment,
                    Some(ast::DuplicateTreatment::Distinct)
                ),
            ),
            ast::FunctionArguments::Subquery(_) => {
                return Err(Error::Unsupported("subqueries".into()))
            }
        };
        if let Some(over) = &f.over {
            return self.bind_window_call(f, &name, over);
        }
        if crate::plan::bind_window::is_window_only(&name) {
            // MySQL's grammar requires OVER after these.
            return Err(Error::Syntax(format!("{}()", name.to_lowercase())));
        }
        let agg = match name.as_str() {
            "COUNT" => Some(AggFunc::Count),
            "SUM" => Some(AggFunc::Sum),
            "MIN" => Some(AggFunc::Min),
            "MAX" => Some(AggFunc::Max),
            "AVG" => Some(AggFunc::Avg),
            "GROUP_CONCAT" => Some(AggFunc::GroupConcat),
            "JSON_ARRAYAGG" => Some(AggFunc::JsonArrayAgg),
            "JSON_OBJECTAGG" => Some(AggFunc::JsonObjectAgg),
            _ => None,
        };
        if agg == Some(AggFunc::GroupConcat) {
            if !self.allow_aggs {
                return Err(Error::InvalidGroupFuncUse);
            }
            return self.bind_group_concat(f, &args, distinct);
        }
        if let Some(mut func) = agg {
            if !self.allow_aggs {
                return Err(Error::InvalidGroupFuncUse);
            }
            if func == AggFunc::JsonArrayAgg && distinct {
                // MySQL has no JSON_ARRAYAGG(DISTINCT ...): a syntax error.
                return Err(Error::Syntax(format!("{name}(DISTINCT ...)")));
            }
            if func == AggFunc::JsonObjectAgg {
                // Two arguments, held as one row value.
                let mut pair = Vec::new();
                for a in args {
                    match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                            self.allow_aggs = false;
                            let r = self.bind(e);
                            self.allow_aggs = true;
                            pair.push(r?);
                        }
                        _ => return Err(Error::Syntax(format!("{name}(...)"))),
                    }
                }
                if pair.len() != 2 || distinct {
                    return Err(Error::WrongFunctionArgs(name.to_lowercase()));
                }
                let call = AggCall {
                    func,
                    arg: Some(Expr::Row(pair)),
                    distinct: false,
                    coll: None,
                    order: Vec::new(),
                    separator: Vec::new(),
                    window: None,
                };
                self.aggs.push(call);
                return Ok(Expr::Agg(self.aggs.len() - 1));
            }
            if args.len() != 1 {
                return Err(Error::Syntax(format!("{name}()")));
            }
            let arg = match args[0] {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard)
                    if func == AggFunc::Count =>
                {
                    func = AggFunc::CountStar;
                    None
                }
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                    // An aggregate's argument cannot itself hold aggregates.
                    self.allow_aggs = false;
                    let r = self.bind(e);
                    self.allow_aggs = true;
                    Some(r?)
                }
                _ => return Err(Error::Syntax(format!("{name}(...)"))),
            };
            // SUM / AVG of an ENUM / SET column add indexes / bitmasks.
            let arg = match (func, arg) {
                (AggFunc::Sum | AggFunc::Avg, Some(e)) => Some(self.numeric_reading(e)),
                (_, arg) => arg,
            };
            // MIN / MAX of a YEAR(2) column: see `year2_extreme`.
            let (arg, year2) = match (func, arg) {
                (AggFunc::Min | AggFunc::Max, Some(e)) => {
                    let (e, year2) = self.year2_extreme(e);
                    (Some(e), year2)
                }
                (_, arg) => (arg, false),
            };
            let coll = arg
                .as_ref()
                .and_then(|e| self.derive(e))
                .map(|d| d.0)
                .filter(|c| !c.is_bytewise());
            let call = AggCall {
                func,
                arg,
                distinct,
                coll,
                order: Vec::new(),
                separator: Vec::new(),
                window: None,
            };
            let agg = self.add_agg(call);
            if year2 {
                let hundred = Box::new(Expr::Literal(Value::UInt(100)));
                return Ok(Expr::Binary(BinOp::Mod, Box::new(agg), hundred));
            }
            return Ok(agg);
        }
        if functions::lookup(&name).is_none() || f.name.0.len() > 1 {
            if let Some(call) = self.bind_stored_call(f)? {
                return Ok(call);
            }
        }
        let mut func =
            functions::lookup(&name).ok_or_else(|| Error::UnknownFunction(name.to_lowercase()))?;
        let mut bound = Vec::with_capacity(args.len());
        for a in args {
            match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                    bound.push(self.bind(e)?)
                }
                _ => return Err(Error::Syntax(format!("{name}(...)"))),
            }
        }
        functions::check_arity(func, &name, bound.len())?;
        match func {
            Func::If => self.conform(bound.iter_mut().skip(1).collect()),
            Func::IfNull | Func::Coalesce => self.conform(bound.iter_mut().collect()),
            Func::FindInSet => self.member_find_in_set(&mut bound),
            // STRCMP compares its operands as `=` would: under the
            // collation MySQL's coercibility rules choose for the pair.
            Func::Strcmp => {
                if let [a, b] = bound.as_mut_slice() {
                    self.collate(&mut [a, b], "strcmp")?;
                }
            }
            // WEIGHT_STRING sorts under its argument's collation, which
            // evaluation cannot see: its name rides along as an argument
            // (none for a binary string, whose weights are its bytes).
            Func::WeightString if bound.len() == 1 => {
                let coll = match bound.first().and_then(|a| self.derive(a)) {
                    Some((c, _)) => Some(c),
                    None => Some(self.conn_coll),
                };
                if let Some(c) = coll.filter(|c| *c != Collation::Binary) {
                    bound.push(Expr::Literal(Value::str(c.name())));
                }
            }
            // LENGTH() counts bytes in the argument's character set: a
            // latin1 column's 'é' is one (the value itself is UTF-8).
            Func::Length => {
                if let Some((c, _)) = bound.first().and_then(|a| self.derive(a)) {
                    let cs = c.character_set();
                    if !cs.is_passthrough() {
                        func = Func::LengthIn(cs);
                    }
                }
            }
            _ => {}
        }
        Ok(Expr::Func(func, bound))
    }

    /// Wraps each of `branches` (the values an IF / IFNULL / COALESCE / CASE
    /// may return) whose type differs from their aggregated type in a
    /// conversion to it ([`Func::Conform`]), so that the value returned has the
    /// type MySQL gives the whole expression whichever branch is taken.
    fn conform(&self, mut branches: Vec<&mut Expr>) {
        // A parameter's or user variable's type is only known when it has a
        // value: leave such expressions as they are.
        if branches
            .iter()
            .any(|e| matches!(**e, Expr::Param(_) | Expr::UserVar(_)))
        {
            return;
        }
        let cols = self.frame_kinds();
        let kinds: Vec<ExprKind> = branches.iter().map(|e| e.kind(&cols, &self.aggs)).collect();
        let target = functions::aggregate_kind(kinds.iter().copied());
        for (e, k) in branches.iter_mut().zip(kinds) {
            if k != target && k != ExprKind::Null && target != ExprKind::Null {
                let inner = std::mem::replace(&mut **e, Expr::Literal(Value::Null));
                **e = Expr::Func(Func::Conform(target), vec![inner]);
            }
        }
    }
}

// The one method of the binder that plans: a subquery is planned where the
// binder meets it, against the binder's frame.
impl Binder<'_> {
    /// Binds a subquery against this binder's frame.
    pub(super) fn subquery(&mut self, q: &ast::Query, kind: SubqueryKind) -> Result<Expr> {
        let ctx = self
            .plan_ctx
            .ok_or_else(|| Error::Unsupported("subqueries in this statement".into()))?;
        let (plan, params, min_ref) =
            crate::plan::select::plan_subquery(ctx, q, &self.scopes, self.frame_len, self.params)?;
        self.params = params;
        if let Some(r) = min_ref {
            // A reference below our own frame start makes us correlated too.
            if r < self.outer_len {
                self.min_outer_ref = Some(self.min_outer_ref.map_or(r, |m| m.min(r)));
            }
        }
        let want = match &kind {
            SubqueryKind::In(lhs, _) => Some(lhs.len()),
            SubqueryKind::Scalar | SubqueryKind::Quantified(..) => Some(1),
            SubqueryKind::Exists(_) | SubqueryKind::Row => None,
        };
        if want.is_some_and(|w| plan.visible != w) {
            return Err(Error::OperandColumns(want.unwrap_or(1)));
        }
        // A row operand takes the subquery's one row whatever its width; one
        // column is a scalar subquery.
        let kind = match kind {
            SubqueryKind::Row if plan.visible == 1 => SubqueryKind::Scalar,
            k => k,
        };
        let kind = match kind {
            // `lhs IN (SELECT ...)` compares each operand with the matching
            // output column under their aggregated collation, which the
            // operand carries (see "Collations").
            SubqueryKind::In(mut lhs, neg) => {
                for (i, l) in lhs.iter_mut().enumerate() {
                    self.collate_with_output(l, &plan, i, "in")?;
                }
                SubqueryKind::In(lhs, neg)
            }
            SubqueryKind::Quantified(mut lhs, op, all) => {
                self.collate_with_output(&mut lhs, &plan, 0, op.symbol())?;
                SubqueryKind::Quantified(lhs, op, all)
            }
            k => k,
        };
        Ok(Expr::Subquery(Box::new(SubqueryExpr {
            plan: std::sync::Arc::new(plan),
            kind,
            correlated: min_ref.is_some(),
        })))
    }
}

/// The column MySQL's `_rowid` names in a table: the PRIMARY KEY when it is
/// one integer column; without a primary key, the first UNIQUE key whose
/// columns are all NOT NULL (the one InnoDB promotes), when it is one integer
/// column. A table with neither has no `_rowid` (error 1054).
pub(crate) fn rowid_column(t: &crate::catalog::TableDef) -> Option<usize> {
    let key: &[usize] = if t.primary_key.is_empty() {
        &t.indexes
            .iter()
            .filter(|i| i.unique && i.state.is_public())
            .find(|i| i.columns.iter().all(|c| !t.columns[*c].nullable))?
            .columns
    } else {
        &t.primary_key
    };
    match key {
        [c] if t.columns[*c].ty.is_integer() => Some(*c),
        _ => None,
    }
}

/// Whether a call is the row constructor `ROW(a, b, ...)`.
pub(super) fn is_row_constructor(f: &ast::Function) -> bool {
    f.over.is_none()
        && f.name.0.len() == 1
        && f.name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .is_some_and(|i| i.quote_style.is_none() && i.value.eq_ignore_ascii_case("row"))
}

/// MySQL 8 refuses a LIMIT in the subquery of IN / ALL / ANY / SOME (error
/// 1235, "LIMIT & IN/ALL/ANY/SOME subquery"), its own or a parenthesised
/// body's; ORDER BY without LIMIT is allowed and ignored. A LIMIT inside a
/// derived table of the subquery is allowed (the usual workaround).
pub(super) fn refuse_limit(q: &ast::Query) -> Result<()> {
    let mut q = q;
    loop {
        if q.limit_clause.is_some() || q.fetch.is_some() {
            return Err(Error::Unsupported(
                "LIMIT & IN/ALL/ANY/SOME subquery".into(),
            ));
        }
        match q.body.as_ref() {
            ast::SetExpr::Query(inner) => q = inner,
            _ => return Ok(()),
        }
    }
}

/// `@@session.x` / `@@local.x` are `x`; `@@global.x` keeps its prefix (the
/// global value, see `crate::catalog::vars`).
fn strip_scope(v: &str) -> String {
    let lower = v.to_ascii_lowercase();
    for p in ["session.", "local."] {
        if let Some(rest) = lower.strip_prefix(p) {
            return rest.to_string();
        }
    }
    lower
}

/// A hex (`0xFF`, `X'FF'`) or bit-value (`b'101'`) literal as an operand of
/// arithmetic or of a bit operator: the unsigned integer of its bytes (the
/// last eight), as MySQL reads such a literal in numeric context. (MySQL 8
/// gives `&`, `|`, `^`, `~`, `<<` and `>>` over binary strings byte-wise
/// binary-string results; Canyon reads them as integers, as MariaDB and
/// MySQL 5.7 do.)
pub(super) fn bit_literal_number(e: &ast::Expr) -> Option<Expr> {
    let ast::Expr::Value(v) = e else {
        return None;
    };
    let bytes = match &v.value {
        ast::Value::HexStringLiteral(_)
        | ast::Value::SingleQuotedByteStringLiteral(_)
        | ast::Value::DoubleQuotedByteStringLiteral(_) => match literal(&v.value).ok()? {
            Value::Bytes(b) => b,
            _ => return None,
        },
        _ => return None,
    };
    let n = bytes[bytes.len().saturating_sub(8)..]
        .iter()
        .fold(0u64, |n, b| n << 8 | *b as u64);
    Some(Expr::Literal(Value::UInt(n)))
}

/// `comparison`, ANDed after the key range a keyed YEAR(2) column's
/// comparison also requires, where there is one (`bind_members`).
pub(super) fn with_key_range(range: Option<Expr>, comparison: Expr) -> Expr {
    match range {
        Some(range) => Expr::Binary(BinOp::And, Box::new(range), Box::new(comparison)),
        None => comparison,
    }
}
