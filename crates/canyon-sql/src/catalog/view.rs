//! Views in the catalog: what CREATE VIEW stores, and how a snapshot holds it.
//!
//! # What a view is here
//! A view is a named SELECT, kept as text (as MySQL keeps it in its data
//! dictionary) together with what was decided when it was created: its
//! column names, ALGORITHM, DEFINER, SQL SECURITY and CHECK OPTION. Nothing
//! about the tables it reads is stored: each statement that uses the view
//! parses the text (once per snapshot: [`View::query`] caches the AST) and
//! plans it against its own catalog snapshot, so a view follows ALTER TABLE
//! of its base tables, and one whose tables or columns went away fails with
//! 1356 ER_VIEW_INVALID when used (`crate::plan::view`).
//!
//! # Namespace
//! Views share the table namespace of their database (MySQL 8.0): CREATE
//! TABLE of a view's name and CREATE VIEW of a table's name fail with 1050.
//! They are held apart from [`crate::catalog::Database::tables`] in
//! [`crate::catalog::Catalog::views`] so that the code that walks tables
//! (statistics, recovery, foreign keys) never meets a view.
//!
//! # Persistence
//! One Meta record per view, key `c/v/<db>\0<name>`, value the JSON of
//! [`ViewDef`] (see docs/format.md). Written by `crate::ddl::view` under
//! the DDL mutex with the rest of a catalog change; loaded by
//! [`crate::catalog::engine::Engine::open`] through `load_record`.

use crate::catalog::Catalog;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use serde::{Deserialize, Serialize};
use sqlparser::ast;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

/// The Meta key prefix of view records.
pub(crate) const META_VIEW: &[u8] = b"c/v/";

/// ALGORITHM = ... as given (MySQL keeps UNDEFINED when not given).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Algorithm {
    /// The server chooses: MERGE when the view can be merged.
    #[default]
    Undefined,
    /// Merge into the query that uses it (UNDEFINED when it cannot be, with a
    /// warning, as MySQL does).
    Merge,
    /// Materialise as a derived table.
    TempTable,
}

impl Algorithm {
    /// The word SHOW CREATE VIEW and information_schema print.
    pub fn sql(self) -> &'static str {
        match self {
            Algorithm::Undefined => "UNDEFINED",
            Algorithm::Merge => "MERGE",
            Algorithm::TempTable => "TEMPTABLE",
        }
    }
}

/// SQL SECURITY: whose privileges the view's body is checked against.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Security {
    /// The definer's (MySQL's default).
    #[default]
    Definer,
    /// The invoking account's.
    Invoker,
}

impl Security {
    /// The word SHOW CREATE VIEW and information_schema print.
    pub fn sql(self) -> &'static str {
        match self {
            Security::Definer => "DEFINER",
            Security::Invoker => "INVOKER",
        }
    }
}

/// WITH [CASCADED | LOCAL] CHECK OPTION.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CheckOption {
    /// No check option.
    #[default]
    None,
    /// WITH \[CASCADED\] CHECK OPTION: this view's condition and those of the
    /// views it reads.
    Cascaded,
    /// WITH LOCAL CHECK OPTION: this view's condition, and those of the
    /// views below that have a check option themselves.
    Local,
}

impl CheckOption {
    /// information_schema.VIEWS.CHECK_OPTION.
    pub fn sql(self) -> &'static str {
        match self {
            CheckOption::None => "NONE",
            CheckOption::Cascaded => "CASCADED",
            CheckOption::Local => "LOCAL",
        }
    }
}

/// A view's persistent definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ViewDef {
    /// Database.
    pub db: String,
    /// Name (case-sensitive, like tables).
    pub name: String,
    /// The view's column names: its column list, or the SELECT's column
    /// names when it had none (decided at CREATE time, as MySQL does).
    pub columns: Vec<String>,
    /// Whether `columns` was written as the view's column list.
    #[serde(default)]
    pub explicit_columns: bool,
    /// The SELECT, as sqlparser prints it (keywords upper-case).
    pub query: String,
    /// ALGORITHM.
    #[serde(default)]
    pub algorithm: Algorithm,
    /// DEFINER user.
    pub definer_user: String,
    /// DEFINER host.
    pub definer_host: String,
    /// SQL SECURITY.
    #[serde(default)]
    pub security: Security,
    /// CHECK OPTION.
    #[serde(default)]
    pub check: CheckOption,
    /// `character_set_client` when it was created.
    pub character_set_client: String,
    /// `collation_connection` when it was created.
    pub collation_connection: String,
    /// information_schema.VIEWS.IS_UPDATABLE, decided at CREATE time as in
    /// MySQL: the view is mergeable (see `crate::plan::view`).
    #[serde(default)]
    pub updatable: bool,
    /// Each column's type as information_schema.COLUMNS shows it, decided
    /// at CREATE time (DESCRIBE plans the view again and shows today's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub column_types: Vec<ViewColumn>,
}

/// One view column's type: its base column's when it is one, else the type
/// of the expression's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ViewColumn {
    /// The type.
    #[serde(deserialize_with = "crate::types::sqltype::deserialize_compat")]
    pub ty: crate::types::SqlType,
    /// Whether it may be NULL.
    pub nullable: bool,
    /// The collation of a character column.
    pub collation: crate::types::collation::Collation,
    /// The base column's DEFAULT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<crate::catalog::DefaultValue>,
}

impl ViewDef {
    /// The view's definer as MySQL prints it: `` `user`@`host` ``.
    pub fn definer(&self) -> String {
        format!(
            "`{}`@`{}`",
            self.definer_user.replace('`', "``"),
            self.definer_host.replace('`', "``")
        )
    }

    /// The statement SHOW CREATE VIEW prints (MySQL 8.0's form: ALGORITHM,
    /// DEFINER and SQL SECURITY always written, the column list when it was
    /// given, the check option when there is one).
    pub fn create_statement(&self) -> String {
        let q = |n: &str| format!("`{}`", n.replace('`', "``"));
        let mut s = format!(
            "CREATE ALGORITHM={} DEFINER={} SQL SECURITY {} VIEW {}",
            self.algorithm.sql(),
            self.definer(),
            self.security.sql(),
            q(&self.name)
        );
        if self.explicit_columns {
            let cols: Vec<String> = self.columns.iter().map(|c| q(c)).collect();
            s.push_str(&format!(" ({})", cols.join(",")));
        }
        s.push_str(" AS ");
        s.push_str(&self.query);
        match self.check {
            CheckOption::None => {}
            CheckOption::Cascaded => s.push_str(" WITH CASCADED CHECK OPTION"),
            CheckOption::Local => s.push_str(" WITH LOCAL CHECK OPTION"),
        }
        s
    }
}

/// A view as statements use it: the definition and its parsed SELECT.
#[derive(Debug)]
pub struct View {
    /// The definition.
    pub def: ViewDef,
    /// The SELECT's AST, parsed at first use (the planner's parse; this layer
    /// does not parse).
    parsed: OnceLock<std::result::Result<Arc<ast::Query>, Error>>,
}

impl View {
    /// Wraps a definition.
    pub fn new(def: ViewDef) -> View {
        View {
            def,
            parsed: OnceLock::new(),
        }
    }

    /// The view's SELECT, parsed by `parse` the first time it is asked for.
    pub fn query(&self, parse: impl FnOnce(&str) -> Result<ast::Query>) -> Result<Arc<ast::Query>> {
        self.parsed
            .get_or_init(|| parse(&self.def.query).map(Arc::new))
            .clone()
    }
}

/// Views by database, then name.
pub type Views = BTreeMap<String, BTreeMap<String, Arc<View>>>;

impl Catalog {
    /// Looks up a view.
    pub fn view(&self, db: &str, name: &str) -> Option<&Arc<View>> {
        self.views.get(db)?.get(name)
    }

    /// The views of a database, by name.
    pub fn views_in(&self, db: &str) -> impl Iterator<Item = &Arc<View>> {
        self.views.get(db).into_iter().flat_map(|m| m.values())
    }

    /// Whether `db`.`name` is a table or a view (the shared namespace).
    pub fn name_taken(&self, db: &str, name: &str) -> bool {
        self.table(db, name).is_some() || self.view(db, name).is_some()
    }
}

/// The Meta key of a view's record.
pub(crate) fn record_key(db: &str, name: &str) -> Vec<u8> {
    let mut k = META_VIEW.to_vec();
    k.extend_from_slice(db.as_bytes());
    k.push(0);
    k.extend_from_slice(name.as_bytes());
    k
}

/// Adds a stored view record to a catalog being loaded.
pub(crate) fn load_record(catalog: &mut Catalog, bytes: &[u8]) -> Result<()> {
    let def: ViewDef = serde_json::from_slice(bytes).map_err(|e| Error::Corrupt(e.to_string()))?;
    if !catalog.databases.contains_key(&def.db) {
        return Err(Error::Corrupt(format!(
            "view {} in unknown database {}",
            def.name, def.db
        )));
    }
    Arc::make_mut(&mut catalog.views)
        .entry(def.db.clone())
        .or_default()
        .insert(def.name.clone(), Arc::new(View::new(def)));
    Ok(())
}

/// The error MySQL gives for a view whose body no longer plans (1356).
pub fn invalid(db: &str, name: &str) -> Error {
    Error::View {
        code: 1356,
        message: format!(
            "View '{db}.{name}' references invalid table(s) or column(s) or function(s) \
             or definer/invoker of view lack rights to use them"
        ),
    }
}

/// 1347 ER_WRONG_OBJECT: '%s.%s' is not %s.
pub fn wrong_object(db: &str, name: &str, what: &str) -> Error {
    Error::View {
        code: 1347,
        message: format!("'{db}.{name}' is not {what}"),
    }
}

// ---- information_schema --------------------------------------------------------------

/// The views the account may see under the pushed filters, in (database,
/// name) order.
fn visible_views<'c>(
    p: &crate::catalog::infoschema::Pushed,
    g: &crate::catalog::infoschema::GenCtx<'c>,
) -> Vec<&'c Arc<View>> {
    let mut out = Vec::new();
    for (db, views) in g.catalog.views.iter() {
        if p.schemas
            .as_ref()
            .is_some_and(|l| !l.iter().any(|d| d == db))
            || !g.account.is_some_and(|a| a.can_use_db(db))
        {
            continue;
        }
        out.extend(views.values().filter(|v| {
            p.names
                .as_ref()
                .is_none_or(|l| l.iter().any(|n| *n == v.def.name))
        }));
    }
    out
}

/// information_schema.TABLES rows of the views: TABLE_TYPE `VIEW`, the
/// storage columns NULL and TABLE_COMMENT `VIEW`, as in MySQL.
pub(crate) fn tables_rows(
    p: &crate::catalog::infoschema::Pushed,
    g: &crate::catalog::infoschema::GenCtx<'_>,
    width: usize,
    out: &mut Vec<Vec<Value>>,
) {
    for v in visible_views(p, g) {
        let mut r = vec![Value::Null; width];
        r[0] = Value::str("def");
        r[1] = Value::str(&v.def.db);
        r[2] = Value::str(&v.def.name);
        r[3] = Value::str("VIEW");
        if let Some(last) = r.last_mut() {
            *last = Value::str("VIEW");
        }
        out.push(r);
    }
}

/// information_schema.VIEWS rows.
pub(crate) fn views_rows(
    p: &crate::catalog::infoschema::Pushed,
    g: &crate::catalog::infoschema::GenCtx<'_>,
    out: &mut Vec<Vec<Value>>,
) {
    for v in visible_views(p, g) {
        let d = &v.def;
        out.push(vec![
            Value::str("def"),
            Value::str(&d.db),
            Value::str(&d.name),
            Value::str(&d.query),
            Value::str(d.check.sql()),
            Value::str(if d.updatable { "YES" } else { "NO" }),
            Value::str(&format!("{}@{}", d.definer_user, d.definer_host)),
            Value::str(d.security.sql()),
            Value::str(&d.character_set_client),
            Value::str(&d.collation_connection),
        ]);
    }
}

/// information_schema.COLUMNS rows of the views (their types as stored at
/// CREATE time; a view created before types were stored shows none).
pub(crate) fn columns_rows(
    p: &crate::catalog::infoschema::Pushed,
    g: &crate::catalog::infoschema::GenCtx<'_>,
    out: &mut Vec<Vec<Value>>,
) {
    use crate::catalog::DefaultValue as D;
    for v in visible_views(p, g) {
        let d = &v.def;
        for (i, (name, c)) in d.columns.iter().zip(&d.column_types).enumerate() {
            let (dt, maxlen, octets, prec, scale, dtprec) =
                crate::catalog::infoschema::type_facts(c.ty);
            let textual = c.ty.is_string() && !c.ty.is_binary();
            let text = |x: &str| if textual { Value::str(x) } else { Value::Null };
            out.push(vec![
                Value::str("def"),
                Value::str(&d.db),
                Value::str(&d.name),
                Value::str(name),
                Value::UInt(i as u64 + 1),
                match &c.default {
                    None | Some(D::Null) => Value::Null,
                    Some(D::Literal(x)) | Some(D::Number(x)) => Value::str(x),
                    Some(D::CurrentTimestamp) => Value::str("CURRENT_TIMESTAMP"),
                },
                Value::str(if c.nullable { "YES" } else { "NO" }),
                Value::str(&dt),
                maxlen,
                octets,
                prec,
                scale,
                dtprec,
                text(c.collation.charset()),
                text(c.collation.name()),
                Value::str(&c.ty.sql_name()),
                Value::str(""),
                Value::str(""),
                Value::str("select,insert,update,references"),
                Value::str(""),
                Value::str(""),
                Value::Null,
            ]);
        }
    }
}
