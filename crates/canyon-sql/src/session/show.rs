//! SHOW statements answered from the catalog snapshot, with MySQL's column
//! names (see the layer's essay for the list), and the forms sqlparser does
//! not parse ([`show_extra`]).

use super::{context::*, dispatch::*, state::*};
use crate::catalog::privileges::Privs;
use crate::catalog::vars;
use crate::catalog::Catalog;
use crate::types::result::QueryResult;
use crate::types::value::Value;
use crate::types::ExprKind;
use canyon_common::{Error, Result};
use sqlparser::ast::{self, Statement};
use std::sync::Arc;

impl State {
    /// SHOW [GLOBAL] STATUS: (name, value) sorted by name. The Com_* style
    /// counters are this session's, or with `global` every session's plus
    /// those of closed ones; connection figures and Uptime are global in
    /// both scopes, as in MySQL. See `crate::catalog::status`.
    pub(super) fn status_rows(&self, global: bool) -> Vec<(String, u64)> {
        let engine = &self.engine;
        let (closed, procs) = engine.status.closed_with(|| engine.processes.all());
        let counts = if global {
            let mut total = closed;
            for p in &procs {
                if !Arc::ptr_eq(p, &self.process) {
                    total.absorb(&p.info().counts);
                }
            }
            total.absorb(&self.counts);
            total
        } else {
            self.counts.clone()
        };
        let since = if global {
            engine.started()
        } else {
            self.flushed_at
        };
        engine.status_rows_from(&counts, &procs, since)
    }

    /// SHOW [GLOBAL] VARIABLES: (name, value) in name order; the global
    /// values, or this session's.
    pub(super) fn variable_rows(&self, global: bool) -> Vec<(&'static str, Value)> {
        vars::NAMES
            .iter()
            .map(|name| {
                let v = if global {
                    self.engine.global_var(name).unwrap_or(Value::Null)
                } else {
                    self.get_var(name).unwrap_or(Value::Null)
                };
                (*name, v)
            })
            .collect()
    }
}

impl Session {
    pub(super) fn describe(
        &mut self,
        cat: &Catalog,
        name: &ast::ObjectName,
    ) -> Result<QueryResult> {
        if let Some(r) = self.describe_view(cat, name, false)? {
            return Ok(r);
        }
        let (db, t) = self.split_name(name)?;
        if crate::catalog::infoschema::is_system_schema(&db) {
            // A system table: its columns as information_schema.COLUMNS
            // describes them.
            let st = crate::catalog::infoschema::lookup_in(&db, &t).ok_or_else(|| {
                Error::UnknownTable {
                    db: db.clone(),
                    table: t.clone(),
                }
            })?;
            let rows = st
                .columns()
                .iter()
                .map(|(c, kind)| {
                    let ty = match kind {
                        crate::types::ExprKind::UInt => "bigint unsigned",
                        crate::types::ExprKind::Int => "bigint",
                        crate::types::ExprKind::DateTime => "datetime",
                        _ => "varchar(64)",
                    };
                    let row = [*c, ty, "YES", ""];
                    let mut r: Vec<Value> = row.iter().map(|x| Value::str(x)).collect();
                    r.extend([Value::Null, Value::str("")]);
                    r
                })
                .collect();
            return Ok(text_rows(
                &["Field", "Type", "Null", "Key", "Default", "Extra"],
                rows,
            ));
        }
        self.state.check_db(cat, &db, "SELECT", Some(&t))?;
        let table = cat.table(&db, &t).ok_or_else(|| Error::UnknownTable {
            db: db.clone(),
            table: t.clone(),
        })?;
        let rows = table
            .def
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let key = if table.def.primary_key.contains(&i) {
                    "PRI"
                } else if table
                    .def
                    .public_indexes()
                    .any(|(_, x)| x.unique && x.columns.len() == 1 && x.columns[0] == i)
                {
                    "UNI"
                } else if table
                    .def
                    .public_indexes()
                    .any(|(_, x)| x.columns.first() == Some(&i))
                {
                    "MUL"
                } else {
                    ""
                };
                let default = match &c.default {
                    None | Some(crate::catalog::DefaultValue::Null) => Value::Null,
                    Some(crate::catalog::DefaultValue::Literal(s)) => Value::str(
                        &crate::catalog::shown_literal_default(c, s, &self.state.time_zone()),
                    ),
                    Some(crate::catalog::DefaultValue::Number(s)) => Value::str(s),
                    Some(crate::catalog::DefaultValue::CurrentTimestamp) => {
                        Value::str(&c.ty.current_timestamp_name())
                    }
                };
                vec![
                    Value::str(&c.name),
                    // As SHOW CREATE TABLE prints it: a declared display
                    // width (`int(5)`, MariaDB's `year(2)`) and ZEROFILL.
                    Value::str(&c.type_name(self.state.engine.config().shows_display_widths())),
                    Value::str(if c.nullable { "YES" } else { "NO" }),
                    Value::str(key),
                    default,
                    Value::str(match (c.auto_increment, c.attrs.on_update_now) {
                        _ if c.attrs.generated.is_some() => crate::ddl::generated::extra(
                            c.attrs.generated.as_ref().expect("checked by the guard"),
                        ),
                        (true, _) => "auto_increment",
                        (false, true) => "on update CURRENT_TIMESTAMP",
                        (false, false) => "",
                    }),
                ]
            })
            .collect();
        Ok(text_rows(
            &["Field", "Type", "Null", "Key", "Default", "Extra"],
            rows,
        ))
    }

    /// The table `name` names, after the SELECT privilege check (SHOW on a table).
    pub(super) fn shown_table<'c>(
        &mut self,
        cat: &'c Catalog,
        name: &ast::ObjectName,
    ) -> Result<&'c crate::catalog::Table> {
        let (db, t) = self.split_name(name)?;
        self.show_table_named(cat, db, t)
    }

    pub(super) fn show_table_named<'c>(
        &mut self,
        cat: &'c Catalog,
        db: String,
        t: String,
    ) -> Result<&'c crate::catalog::Table> {
        self.state.check_db(cat, &db, "SELECT", Some(&t))?;
        cat.table(&db, &t)
            .map(|t| &**t)
            .ok_or(Error::UnknownTable { db, table: t })
    }

    /// SHOW FULL COLUMNS: DESCRIBE's columns plus Collation, Privileges, Comment.
    pub(super) fn show_full_columns(
        &mut self,
        cat: &Catalog,
        name: &ast::ObjectName,
    ) -> Result<QueryResult> {
        if let Some(r) = self.describe_view(cat, name, true)? {
            return Ok(r);
        }
        let table = self.shown_table(cat, name)?;
        let QueryResult::Rows { rows, .. } = self.describe(cat, name)? else {
            return Err(Error::Internal("DESCRIBE returned no rows".into()));
        };
        let rows = rows
            .into_iter()
            .zip(&table.def.columns)
            .map(|(mut r, c)| {
                let collation = if c.ty.is_string() && !c.ty.is_binary() {
                    Value::str(c.collation.name())
                } else {
                    Value::Null
                };
                r.insert(2, collation);
                r.push(Value::str("select,insert,update,references"));
                r.push(Value::str(&c.attrs.comment));
                r
            })
            .collect();
        Ok(text_rows(
            &[
                "Field",
                "Type",
                "Collation",
                "Null",
                "Key",
                "Default",
                "Extra",
                "Privileges",
                "Comment",
            ],
            rows,
        ))
    }

    /// SHOW CREATE TABLE: a CREATE TABLE statement that re-creates the table.
    pub(super) fn show_create_table(
        &mut self,
        cat: &Catalog,
        name: &ast::ObjectName,
    ) -> Result<QueryResult> {
        let table = self.shown_table(cat, name)?;
        let def = &table.def;
        let quote = |n: &str| format!("`{}`", n.replace('`', "``"));
        let col_list = |cols: &[usize]| {
            cols.iter()
                .map(|&i| quote(&def.columns[i].name))
                .collect::<Vec<_>>()
                .join(",")
        };
        let widths = self.state.engine.config().shows_display_widths();
        let mariadb = self.state.engine.config().presentation
            == crate::catalog::config::Presentation::Mariadb;
        let mut lines = Vec::new();
        for c in &def.columns {
            let mut l = format!("  {} {}", quote(&c.name), c.type_name(widths));
            // As MySQL 8: the column's collation where it is not the table's.
            let table_coll = def.default_collation;
            if c.ty.is_string() && !c.ty.is_binary() && c.collation != table_coll {
                if c.collation.charset() != table_coll.charset() {
                    l.push_str(&format!(" CHARACTER SET {}", c.collation.charset()));
                }
                l.push_str(&format!(" COLLATE {}", c.collation.name()));
            }
            if let Some(g) = &c.attrs.generated {
                // As MySQL 8: the clause, then NOT NULL and COMMENT; no
                // DEFAULT (a generated column has none).
                l.push_str(&crate::ddl::generated::show_clause(g, mariadb));
                if !c.nullable {
                    l.push_str(" NOT NULL");
                }
                if !c.attrs.comment.is_empty() {
                    l.push_str(&format!(" COMMENT {}", sql_string(&c.attrs.comment)));
                }
                lines.push(l);
                continue;
            }
            if !c.nullable {
                l.push_str(" NOT NULL");
            } else if matches!(c.ty, crate::types::SqlType::Timestamp(_)) {
                // MySQL spells out a TIMESTAMP's NULL (it once meant NOT NULL
                // by default).
                l.push_str(" NULL");
            }
            match &c.default {
                Some(crate::catalog::DefaultValue::Literal(v)) => {
                    // A TIMESTAMP's default is an instant, shown in this
                    // session's zone.
                    let v = crate::catalog::shown_literal_default(c, v, &self.state.time_zone());
                    l.push_str(" DEFAULT ");
                    l.push_str(&shown_default(c.ty, &v, mariadb));
                }
                Some(crate::catalog::DefaultValue::Number(v)) => {
                    l.push_str(" DEFAULT ");
                    l.push_str(&shown_default(c.ty, v, mariadb));
                }
                Some(crate::catalog::DefaultValue::CurrentTimestamp) => {
                    l.push_str(" DEFAULT ");
                    l.push_str(&c.ty.current_timestamp_name());
                }
                // As MySQL: an AUTO_INCREMENT column shows no DEFAULT NULL,
                // nor (MySQL 8; MariaDB does) a TEXT / BLOB column, which
                // cannot have a default.
                Some(crate::catalog::DefaultValue::Null) | None
                    if c.nullable
                        && !c.auto_increment
                        && (mariadb
                            || !matches!(
                                c.ty,
                                crate::types::SqlType::Text(_) | crate::types::SqlType::Blob(_)
                            )) =>
                {
                    l.push_str(" DEFAULT NULL");
                }
                _ => {}
            }
            if c.attrs.on_update_now {
                l.push_str(" ON UPDATE ");
                l.push_str(&c.ty.current_timestamp_name());
            }
            if c.auto_increment {
                l.push_str(" AUTO_INCREMENT");
            }
            if !c.attrs.comment.is_empty() {
                l.push_str(&format!(" COMMENT {}", sql_string(&c.attrs.comment)));
            }
            lines.push(l);
        }
        if !def.primary_key.is_empty() {
            lines.push(format!("  PRIMARY KEY ({})", col_list(&def.primary_key)));
        }
        for (_, x) in def.public_indexes() {
            let kind = if x.attrs.fulltext {
                "FULLTEXT KEY"
            } else if x.unique {
                "UNIQUE KEY"
            } else {
                "KEY"
            };
            let parts = x
                .columns
                .iter()
                .enumerate()
                .map(|(seq, &c)| {
                    let mut p = quote(&def.columns[c].name);
                    if let Some(n) = x.attrs.prefix(seq) {
                        p.push_str(&format!("({n})"));
                    }
                    if x.attrs.desc(seq) {
                        p.push_str(" DESC");
                    }
                    p
                })
                .collect::<Vec<_>>()
                .join(",");
            let mut l = format!("  {kind} {} ({parts})", quote(&x.name));
            if let Some(u) = x.attrs.using {
                l.push_str(&format!(" USING {}", u.name()));
            }
            if !x.attrs.comment.is_empty() {
                l.push_str(&format!(" COMMENT {}", sql_string(&x.attrs.comment)));
            }
            lines.push(l);
        }
        for fk in &def.foreign_keys {
            lines.push(format!(
                "  {}",
                crate::exec::foreign::constraint_clause(def, fk)
            ));
        }
        // As MySQL: the next AUTO_INCREMENT value, when past 1.
        let next_auto_increment = table
            .auto_increment_column()
            .map(|_| {
                table
                    .auto_increment
                    .load(std::sync::atomic::Ordering::Relaxed)
                    .saturating_add(1)
            })
            .filter(|n| *n > 1)
            .map(|n| format!(" AUTO_INCREMENT={n}"))
            .unwrap_or_default();
        let temporary = if crate::catalog::temporary::is_temporary(def.id) {
            "TEMPORARY "
        } else {
            ""
        };
        let mut text = format!(
            "CREATE {temporary}TABLE {} (\n{}\n) ENGINE={}{next_auto_increment} DEFAULT CHARSET={} COLLATE={}",
            quote(&def.name),
            lines.join(",\n"),
            def.engine.as_deref().unwrap_or("InnoDB"),
            def.default_collation.charset(),
            def.default_collation.name(),
        );
        if !def.comment.is_empty() {
            text.push_str(&format!(" COMMENT={}", sql_string(&def.comment)));
        }
        if let Some(p) = &def.partitioning {
            text.push('\n');
            text.push_str(&p.show_clause(mariadb));
        }
        Ok(text_rows(
            &["Table", "Create Table"],
            vec![vec![Value::str(&def.name), Value::str(&text)]],
        ))
    }

    /// Runs a SHOW statement that sqlparser does not parse (see [`show_extra`]).
    pub(super) fn run_show_extra(&mut self, show: &ShowExtra) -> Result<QueryResult> {
        match show {
            ShowExtra::Empty(columns) => Ok(text_rows(columns, Vec::new())),
            ShowExtra::Engine { name, mutex } => self.show_engine(name, *mutex),
            ShowExtra::TableStatus { db, like } => {
                let cat = self.state.engine.catalog();
                let db = match db {
                    Some(d) => d.clone(),
                    None => self.state.db.clone().ok_or(Error::NoDatabaseSelected)?,
                };
                self.state.check_db(&cat, &db, "SHOW", None)?;
                let mut rows = Vec::new();
                if crate::catalog::infoschema::is_system_schema(&db) {
                    for t in crate::catalog::infoschema::system_tables(&db) {
                        if like_match(like, t.name()) {
                            let mut r = vec![Value::Null; 18];
                            r[0] = Value::str(t.name());
                            if let crate::catalog::infoschema::SystemTable::Perf(_) = t {
                                r[1] = Value::str("PERFORMANCE_SCHEMA");
                            }
                            r[2] = Value::Int(10);
                            r[16] = Value::str("");
                            r[17] = Value::str("");
                            rows.push(r);
                        }
                    }
                } else {
                    let database = cat
                        .databases
                        .get(&db)
                        .ok_or_else(|| Error::UnknownDatabase(db.clone()))?;
                    for t in database.tables.values() {
                        if !like_match(like, &t.def.name) {
                            continue;
                        }
                        // TABLES' row without TABLE_CATALOG, TABLE_SCHEMA and
                        // TABLE_TYPE: SHOW TABLE STATUS's columns.
                        let mut r =
                            crate::catalog::infoschema::tables_row(&db, t, &self.state.time_zone());
                        r.remove(3);
                        r.drain(..2);
                        rows.push(r);
                    }
                    // Views: their name, NULLs, Comment `VIEW` (as MySQL).
                    for v in cat.views_in(&db).filter(|v| like_match(like, &v.def.name)) {
                        let mut r = vec![Value::Null; 18];
                        r[0] = Value::str(&v.def.name);
                        r[17] = Value::str("VIEW");
                        rows.push(r);
                    }
                    rows.sort_by(|a, b| a[0].to_display().cmp(&b[0].to_display()));
                }
                use ExprKind::{DateTime, Int, String as Str, UInt};
                Ok(typed_rows(
                    &[
                        ("Name", Str),
                        ("Engine", Str),
                        ("Version", Int),
                        ("Row_format", Str),
                        ("Rows", UInt),
                        ("Avg_row_length", UInt),
                        ("Data_length", UInt),
                        ("Max_data_length", UInt),
                        ("Index_length", UInt),
                        ("Data_free", UInt),
                        ("Auto_increment", UInt),
                        ("Create_time", DateTime),
                        ("Update_time", DateTime),
                        ("Check_time", DateTime),
                        ("Collation", Str),
                        ("Checksum", Int),
                        ("Create_options", Str),
                        ("Comment", Str),
                    ],
                    rows,
                ))
            }
            ShowExtra::CreateDatabase { db, if_not_exists } => {
                let cat = self.state.engine.catalog();
                let (name, collation) = if crate::catalog::infoschema::is_info_schema(db) {
                    (crate::catalog::infoschema::NAME, "utf8mb3_general_ci")
                } else if let Some(name) = crate::catalog::infoschema::system_schema_name(db) {
                    (name, "utf8mb4_0900_ai_ci")
                } else {
                    let d = cat
                        .databases
                        .get(db.as_str())
                        .ok_or_else(|| Error::UnknownDatabase(db.clone()))?;
                    (d.name.as_str(), d.default_collation.name())
                };
                self.state.check_db(&cat, name, "SHOW", None)?;
                let charset = collation.split('_').next().unwrap_or("utf8mb4");
                // MySQL 8 adds `/*!80016 DEFAULT ENCRYPTION='N' */`; Canyon's
                // parser would read that version comment and refuse it, and
                // the statement must re-create the database (dump tools).
                let text = format!(
                    "CREATE DATABASE {}`{}` /*!40100 DEFAULT CHARACTER SET {charset} COLLATE {collation} */",
                    if *if_not_exists { "/*!32312 IF NOT EXISTS*/ " } else { "" },
                    name.replace('`', "``"),
                );
                Ok(text_rows(
                    &["Database", "Create Database"],
                    vec![vec![Value::str(name), Value::str(&text)]],
                ))
            }
            ShowExtra::Engines => Ok(text_rows(
                &[
                    "Engine",
                    "Support",
                    "Comment",
                    "Transactions",
                    "XA",
                    "Savepoints",
                ],
                crate::catalog::engine_rows()
                    .map(|r| r.iter().map(|s| Value::str(s)).collect())
                    .collect(),
            )),
            ShowExtra::Index { db, table } => {
                let cat = self.state.catalog();
                let db = match db {
                    Some(d) => d.clone(),
                    None => self.state.db.clone().ok_or(Error::NoDatabaseSelected)?,
                };
                let t = self.show_table_named(&cat, db, table.clone())?;
                let def = &t.def;
                let mariadb = self.state.engine.config().presentation
                    == crate::catalog::config::Presentation::Mariadb;
                let no_attrs = crate::catalog::IndexAttrs::default();
                let mut keys: Vec<(&str, bool, &[usize], Option<_>, &crate::catalog::IndexAttrs)> =
                    Vec::new();
                if !def.primary_key.is_empty() {
                    keys.push(("PRIMARY", true, &def.primary_key, None, &no_attrs));
                }
                for (_, x) in def.public_indexes() {
                    keys.push((&x.name, x.unique, &x.columns, Some(x.id), &x.attrs));
                }
                let mut rows = Vec::new();
                for (name, unique, cols, id, attrs) in keys {
                    for (seq, &c) in cols.iter().enumerate() {
                        let col = &def.columns[c];
                        // Distinct values of the key's first seq+1 columns, from
                        // the table's statistics (0 before the first analysis).
                        let cardinality = t.stats.n_diff(id, seq + 1).unwrap_or(0.0);
                        // A FULLTEXT index has no order and no statistics.
                        let ft = attrs.fulltext;
                        rows.push(vec![
                            Value::str(&def.name),
                            Value::Int(!unique as i64),
                            Value::str(name),
                            Value::Int(seq as i64 + 1),
                            Value::str(&col.name),
                            if ft {
                                Value::Null
                            } else {
                                Value::str(if attrs.desc(seq) { "D" } else { "A" })
                            },
                            if ft {
                                Value::Null
                            } else {
                                Value::Int(cardinality.round() as i64)
                            },
                            attrs
                                .prefix(seq)
                                .map_or(Value::Null, |n| Value::Int(n.into())),
                            Value::Null,
                            Value::str(if col.nullable { "YES" } else { "" }),
                            Value::str(if ft { "FULLTEXT" } else { "BTREE" }),
                            Value::str(""),
                            Value::str(&attrs.comment),
                        ]);
                        // MySQL 8.0 ends a row with Visible and Expression;
                        // MariaDB with Ignored (MariaDB's Spider reads the
                        // cardinality of a remote table's keys with SHOW INDEX
                        // and refuses more than 14 columns).
                        let row = rows.last_mut().expect("just pushed");
                        if mariadb {
                            row.push(Value::str("NO"));
                        } else {
                            row.extend([Value::str("YES"), Value::Null]);
                        }
                    }
                }
                use ExprKind::{Int, String as Str};
                let last: &[(&str, ExprKind)] = if mariadb {
                    &[("Ignored", Str)]
                } else {
                    &[("Visible", Str), ("Expression", Str)]
                };
                Ok(typed_rows(
                    &[
                        ("Table", Str),
                        ("Non_unique", Int),
                        ("Key_name", Str),
                        ("Seq_in_index", Int),
                        ("Column_name", Str),
                        ("Collation", Str),
                        ("Cardinality", Int),
                        ("Sub_part", Int),
                        ("Packed", Str),
                        ("Null", Str),
                        ("Index_type", Str),
                        ("Comment", Str),
                        ("Index_comment", Str),
                    ]
                    .iter()
                    .chain(last)
                    .copied()
                    .collect::<Vec<_>>(),
                    rows,
                ))
            }
        }
    }
}

pub(super) fn like_filter(f: Option<&ast::ShowStatementFilter>) -> Result<Option<String>> {
    match f {
        None => Ok(None),
        Some(ast::ShowStatementFilter::Like(p)) | Some(ast::ShowStatementFilter::NoKeyword(p)) => {
            Ok(Some(p.clone()))
        }
        Some(_) => Err(Error::Unsupported("SHOW ... WHERE".into())),
    }
}

/// A SHOW statement with a WHERE condition, split into the statement without
/// it and the condition; `None` for any other statement.
fn split_show_where(stmt: &Statement) -> Option<(Statement, ast::Expr)> {
    fn take(f: &mut Option<ast::ShowStatementFilter>) -> Option<ast::Expr> {
        match f.take() {
            Some(ast::ShowStatementFilter::Where(e)) => Some(e),
            other => {
                *f = other;
                None
            }
        }
    }
    let mut s = stmt.clone();
    let cond = match &mut s {
        Statement::ShowVariables { filter, .. }
        | Statement::ShowStatus { filter, .. }
        | Statement::ShowCollation { filter } => take(filter),
        Statement::ShowCharset(c) => take(&mut c.filter),
        Statement::ShowTables { show_options, .. }
        | Statement::ShowDatabases { show_options, .. }
        | Statement::ShowSchemas { show_options, .. } => {
            match show_options.filter_position.take() {
                Some(ast::ShowStatementFilterPosition::Infix(ast::ShowStatementFilter::Where(
                    e,
                )))
                | Some(ast::ShowStatementFilterPosition::Suffix(
                    ast::ShowStatementFilter::Where(e),
                )) => Some(e),
                _ => None,
            }
        }
        _ => None,
    }?;
    Some((s, cond))
}

pub(super) fn show_like(o: &ast::ShowStatementOptions) -> Result<Option<String>> {
    match &o.filter_position {
        None => Ok(None),
        Some(ast::ShowStatementFilterPosition::Infix(f))
        | Some(ast::ShowStatementFilterPosition::Suffix(f)) => like_filter(Some(f)),
    }
}

/// Whether `name` passes an optional LIKE pattern.
pub(super) fn like_match(pattern: &Option<String>, name: &str) -> bool {
    pattern
        .as_ref()
        .is_none_or(|p| crate::expr::like(name.as_bytes(), p.as_bytes(), b'\\'))
}

/// [`like_match`] without regard to case, as MySQL matches SHOW STATUS's
/// names (`SHOW STATUS LIKE 'binlog_snapshot_%'`, what mariadb-dump
/// sends, finds `Binlog_snapshot_file`).
pub(super) fn like_match_ci(pattern: &Option<String>, name: &str) -> bool {
    pattern.as_ref().is_none_or(|p| {
        crate::expr::like(
            name.to_ascii_lowercase().as_bytes(),
            p.to_ascii_lowercase().as_bytes(),
            b'\\',
        )
    })
}

/// A SHOW statement sqlparser 0.63 does not parse.
#[derive(Debug, PartialEq)]
pub(super) enum ShowExtra {
    /// SHOW [STORAGE] ENGINES.
    Engines,
    /// SHOW {INDEX | INDEXES | KEYS} {FROM | IN} t [{FROM | IN} db].
    Index {
        /// The database, if named.
        db: Option<String>,
        /// The table.
        table: String,
    },
    /// SHOW TABLE STATUS [{FROM | IN} db] [LIKE 'pattern'].
    TableStatus {
        /// The database, if named.
        db: Option<String>,
        /// The LIKE pattern.
        like: Option<String>,
    },
    /// SHOW CREATE {DATABASE | SCHEMA} [IF NOT EXISTS] db.
    CreateDatabase {
        /// The database.
        db: String,
        /// IF NOT EXISTS.
        if_not_exists: bool,
    },
    /// SHOW ENGINE name {STATUS | MUTEX} (`super::engine_status`).
    Engine {
        /// The engine as written.
        name: String,
        /// MUTEX rather than STATUS.
        mutex: bool,
    },
    /// SHOW EVENTS [...]: always empty (Canyon has no events), with MySQL's
    /// columns; dump tools send it.
    Empty(&'static [&'static str]),
}

pub(super) const SHOW_EVENTS: &[&str] = &[
    "Db",
    "Name",
    "Definer",
    "Time zone",
    "Type",
    "Execute at",
    "Interval value",
    "Interval field",
    "Starts",
    "Ends",
    "Status",
    "Originator",
    "character_set_client",
    "collation_connection",
    "Database Collation",
];

pub(super) const SHOW_TRIGGERS: &[&str] = &[
    "Trigger",
    "Event",
    "Table",
    "Statement",
    "Timing",
    "Created",
    "sql_mode",
    "Definer",
    "character_set_client",
    "collation_connection",
    "Database Collation",
];

pub(super) const SHOW_ROUTINE_STATUS: &[&str] = &[
    "Db",
    "Name",
    "Type",
    "Definer",
    "Modified",
    "Created",
    "Security_type",
    "Comment",
    "character_set_client",
    "collation_connection",
    "Database Collation",
];

/// The value of a quoted string literal that is the whole of `w` ('...' or
/// "...", with doubled quotes or backslash escapes); `None` otherwise.
pub(super) fn string_literal(w: &str) -> Option<String> {
    let q = w.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let inner = w.strip_prefix(q)?.strip_suffix(q)?;
    let mut out = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.push(chars.next()?);
        } else if c == q {
            // Only a doubled quote may appear inside.
            if chars.next() != Some(q) {
                return None;
            }
            out.push(q);
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// The byte offset of the first `.` outside backquotes in a name as written.
fn unquoted_dot(name: &str) -> Option<usize> {
    let mut quoted = false;
    for (i, c) in name.char_indices() {
        match c {
            '`' => quoted = !quoted,
            '.' if !quoted => return Some(i),
            _ => {}
        }
    }
    None
}

/// Recognises the SHOW forms of [`ShowExtra`] in a whole query text (one
/// statement, an optional `;`); `None` for anything else, which then goes to the
/// parser as usual.
pub(super) fn show_extra(sql: &str) -> Option<ShowExtra> {
    let text = sql.trim();
    if !text
        .get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case("SHOW "))
    {
        return None;
    }
    let text = text.strip_suffix(';').unwrap_or(text);
    let words: Vec<&str> = text.split_whitespace().collect();
    let is = |w: &str, k: &str| w.eq_ignore_ascii_case(k);
    let ident = |w: &str| -> Option<String> {
        let w = match w.strip_prefix('`') {
            Some(r) => r.strip_suffix('`')?,
            None => w,
        };
        (!w.is_empty() && !w.contains(['`', '\'', '"', ';', '('])).then(|| w.to_string())
    };
    match words.as_slice() {
        [_, e] if is(e, "ENGINES") => Some(ShowExtra::Engines),
        [_, s, e] if is(s, "STORAGE") && is(e, "ENGINES") => Some(ShowExtra::Engines),
        [_, k, f, rest @ ..]
            if ["INDEX", "INDEXES", "KEYS"].iter().any(|x| is(k, x))
                && (is(f, "FROM") || is(f, "IN")) =>
        {
            let (db, table) = match rest {
                // `db.t`, `` `db`.`t` ``: split at the dot outside backquotes.
                [t] => match unquoted_dot(t) {
                    Some(at) => (Some(ident(&t[..at])?), ident(&t[at + 1..])?),
                    None => (None, ident(t)?),
                },
                [t, f2, d] if is(f2, "FROM") || is(f2, "IN") => (Some(ident(d)?), ident(t)?),
                _ => return None,
            };
            Some(ShowExtra::Index { db, table })
        }
        [_, t, st, rest @ ..] if is(t, "TABLE") && is(st, "STATUS") => {
            let (db, rest) = match rest {
                [f, d, r @ ..] if is(f, "FROM") || is(f, "IN") => (Some(ident(d)?), r),
                r => (None, r),
            };
            let like = match rest {
                [] => None,
                [l, _, ..] if is(l, "LIKE") => {
                    // The pattern may hold spaces: take the text after LIKE.
                    let at = text.to_ascii_uppercase().rfind(" LIKE ")?;
                    Some(string_literal(text[at + 6..].trim())?)
                }
                _ => return None,
            };
            Some(ShowExtra::TableStatus { db, like })
        }
        [_, c, d, rest @ ..] if is(c, "CREATE") && (is(d, "DATABASE") || is(d, "SCHEMA")) => {
            match rest {
                [i, n, e, db] if is(i, "IF") && is(n, "NOT") && is(e, "EXISTS") => {
                    Some(ShowExtra::CreateDatabase {
                        db: ident(db)?,
                        if_not_exists: true,
                    })
                }
                [db] => Some(ShowExtra::CreateDatabase {
                    db: ident(db)?,
                    if_not_exists: false,
                }),
                _ => None,
            }
        }
        [_, e, ..] if is(e, "EVENTS") => Some(ShowExtra::Empty(SHOW_EVENTS)),
        [_, e, name, what] if is(e, "ENGINE") && (is(what, "STATUS") || is(what, "MUTEX")) => {
            Some(ShowExtra::Engine {
                name: ident(name)?,
                mutex: is(what, "MUTEX"),
            })
        }
        // SHOW TRIGGERS and SHOW {PROCEDURE | FUNCTION} STATUS: `routines`.
        _ => None,
    }
}

impl Session {
    /// SHOW WARNINGS / SHOW ERRORS.
    pub(super) fn show_warnings(&mut self, errors_only: bool) -> Result<QueryResult> {
        let rows = self
            .state
            .warnings
            .iter()
            .filter(|w| !errors_only || w.0 == "Error")
            .map(|(level, code, msg)| {
                vec![Value::str(level), Value::Int(*code as i64), Value::str(msg)]
            })
            .collect();
        Ok(text_rows(&["Level", "Code", "Message"], rows))
    }
}

impl Session {
    /// The SHOW statements sqlparser parses, and DESCRIBE.
    ///
    /// `SHOW ... WHERE cond` (VARIABLES, STATUS, [FULL] TABLES, DATABASES,
    /// CHARACTER SET, COLLATION) runs the statement without its condition and
    /// keeps the rows `cond` holds for, the result's column names naming its
    /// columns: MySQL runs these as a SELECT ... WHERE over the
    /// information_schema table behind them (manual, "Extensions to SHOW
    /// Statements"), whose string columns compare case-insensitively
    /// (utf8mb3_general_ci). Debezium lists tables with `SHOW FULL TABLES IN
    /// db WHERE Table_Type = 'BASE TABLE'` and reads character sets with
    /// `SHOW VARIABLES WHERE Variable_name IN (...)`.
    pub(super) fn run_show(&mut self, cat: &Arc<Catalog>, stmt: &Statement) -> Result<QueryResult> {
        match split_show_where(stmt) {
            Some((unfiltered, cond)) => {
                let result = self.run_show_unfiltered(cat, &unfiltered)?;
                self.keep_show_rows(result, &cond)
            }
            None => self.run_show_unfiltered(cat, stmt),
        }
    }

    /// The rows of a SHOW result for which `cond` is true.
    fn keep_show_rows(&self, result: QueryResult, cond: &ast::Expr) -> Result<QueryResult> {
        let QueryResult::Rows {
            columns,
            rows,
            warnings,
        } = result
        else {
            return Ok(result);
        };
        use crate::types::result::ColumnType;
        let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
        let kinds: Vec<ExprKind> = columns
            .iter()
            .map(|c| match c.column_type {
                ColumnType::LongLong
                    if c.flags & crate::types::result::column_flags::UNSIGNED != 0 =>
                {
                    ExprKind::UInt
                }
                ColumnType::LongLong | ColumnType::Long => ExprKind::Int,
                ColumnType::Double => ExprKind::Double,
                _ => ExprKind::String,
            })
            .collect();
        let colls = vec![Some(crate::types::collation::Collation::Utf8mb3GeneralCi); names.len()];
        let mut b = crate::plan::bind::Binder::new(None, None);
        b.frame_len = names.len();
        b.scopes.push(crate::plan::bind::Scope::of_derived(
            "", names, &kinds, &colls, 0,
        ));
        b.context = "where clause";
        let cond = b.bind(cond)?;
        let ctx = StmtCtx::new(&self.state, &[]);
        let mut kept = Vec::with_capacity(rows.len());
        for row in rows {
            let env = crate::expr::Env {
                row: &row,
                aggs: &[],
                ctx: &ctx,
            };
            if crate::expr::eval_predicate(&cond, &env)? {
                kept.push(row);
            }
        }
        Ok(QueryResult::Rows {
            columns,
            rows: kept,
            warnings,
        })
    }

    fn run_show_unfiltered(&mut self, cat: &Arc<Catalog>, stmt: &Statement) -> Result<QueryResult> {
        match stmt {
            Statement::ShowVariables { filter, global, .. } => {
                // Variable names match case-insensitively (MySQL compares
                // them under utf8mb3_general_ci): `LIKE 'BINLOG_ROW%'`
                // finds binlog_row_image, as replication tools expect.
                let pattern = like_filter(filter.as_ref())?.map(|p| p.to_ascii_lowercase());
                let rows = self
                    .state
                    .variable_rows(*global)
                    .into_iter()
                    .filter(|(name, _)| {
                        pattern
                            .as_ref()
                            .is_none_or(|p| crate::expr::like(name.as_bytes(), p.as_bytes(), b'\\'))
                    })
                    .map(|(name, v)| {
                        vec![
                            Value::str(name),
                            Value::Bytes(v.to_text().unwrap_or_default()),
                        ]
                    })
                    .collect();
                Ok(text_rows(&["Variable_name", "Value"], rows))
            }
            // SHOW SCHEMAS is SHOW DATABASES in MySQL.
            Statement::ShowDatabases { show_options, .. }
            | Statement::ShowSchemas { show_options, .. } => {
                let pattern = show_like(show_options)?;
                let header = match &pattern {
                    Some(p) => format!("Database ({p})"),
                    None => "Database".to_string(),
                };
                let mut account = self.state.account(cat);
                let mut names: Vec<&str> = cat.databases.keys().map(String::as_str).collect();
                // Every account sees information_schema (MySQL lists it first:
                // it sorts before any name a user is likely to pick).
                names.push(crate::catalog::infoschema::NAME);
                names.push(crate::catalog::perfschema::NAME);
                names.push(crate::catalog::perfschema::SYS);
                names.sort_unstable();
                let rows = names
                    .into_iter()
                    .filter(|d| {
                        crate::catalog::infoschema::is_system_schema(d)
                            || account.as_mut().is_some_and(|a| a.can_use_db(d))
                    })
                    .filter(|d| {
                        pattern
                            .as_ref()
                            .is_none_or(|p| crate::expr::like(d.as_bytes(), p.as_bytes(), b'\\'))
                    })
                    .map(|d| vec![Value::str(d)])
                    .collect();
                Ok(text_rows(&[&header], rows))
            }
            Statement::ShowTables {
                show_options, full, ..
            } => {
                let db = match show_options
                    .show_in
                    .as_ref()
                    .and_then(|s| s.parent_name.as_ref())
                {
                    Some(n) => object_name(n).last().cloned().unwrap_or_default(),
                    None => self.state.db.clone().ok_or(Error::NoDatabaseSelected)?,
                };
                // MySQL 8 lists no temporary table (and a shadowed base
                // table still): the published catalog, not the session's.
                let published = self.state.engine.catalog();
                let cat: &Arc<Catalog> = &published;
                if crate::catalog::infoschema::is_system_schema(&db) {
                    let pattern = show_like(show_options)?;
                    let tables = crate::catalog::infoschema::system_tables(&db);
                    let header = format!("Tables_in_{}", tables[0].schema());
                    let rows: Vec<Vec<Value>> = tables
                        .iter()
                        .filter(|t| like_match(&pattern, t.name()))
                        .map(|t| {
                            let mut r = vec![Value::str(t.name())];
                            if *full {
                                r.push(Value::str(match t {
                                    crate::catalog::infoschema::SystemTable::Perf(_) => {
                                        "BASE TABLE"
                                    }
                                    _ => "SYSTEM VIEW",
                                }));
                            }
                            r
                        })
                        .collect();
                    return if *full {
                        Ok(text_rows(&[&header, "Table_type"], rows))
                    } else {
                        Ok(text_rows(&[&header], rows))
                    };
                }
                let database = cat
                    .databases
                    .get(&db)
                    .ok_or_else(|| Error::UnknownDatabase(db.clone()))?;
                self.state.check_db(cat, &db, "SHOW", None)?;
                let pattern = show_like(show_options)?;
                let header = format!("Tables_in_{db}");
                // Tables and views share the namespace; both listed by name.
                let mut names: Vec<(&String, &str)> = database
                    .tables
                    .keys()
                    .map(|t| (t, "BASE TABLE"))
                    .chain(cat.views_in(&db).map(|v| (&v.def.name, "VIEW")))
                    .collect();
                names.sort_unstable();
                let rows: Vec<Vec<Value>> = names
                    .into_iter()
                    .filter(|(t, _)| {
                        pattern
                            .as_ref()
                            .is_none_or(|p| crate::expr::like(t.as_bytes(), p.as_bytes(), b'\\'))
                    })
                    .map(|(t, kind)| {
                        if *full {
                            vec![Value::str(t), Value::str(kind)]
                        } else {
                            vec![Value::str(t)]
                        }
                    })
                    .collect();
                if *full {
                    Ok(text_rows(&[&header, "Table_type"], rows))
                } else {
                    Ok(text_rows(&[&header], rows))
                }
            }
            Statement::ShowColumns {
                show_options, full, ..
            } => {
                let name = show_options
                    .show_in
                    .as_ref()
                    .and_then(|s| s.parent_name.as_ref())
                    .ok_or_else(|| Error::Syntax("SHOW COLUMNS needs FROM table".into()))?;
                if *full {
                    self.show_full_columns(cat, name)
                } else {
                    self.describe(cat, name)
                }
            }
            Statement::ShowCreate {
                obj_type: ast::ShowCreateObject::Table,
                obj_name,
            } => match self.show_create_view(cat, obj_name)? {
                Some(r) => Ok(r),
                None => self.show_create_table(cat, obj_name),
            },
            Statement::ShowCreate {
                obj_type: ast::ShowCreateObject::View,
                obj_name,
            } => match self.show_create_view(cat, obj_name)? {
                Some(r) => Ok(r),
                None => self.show_create_not_view(cat, obj_name),
            },
            Statement::ShowCharset(c) => {
                let pattern = like_filter(c.filter.as_ref())?;
                let rows = crate::types::collation::CHARSETS
                    .iter()
                    .filter(|r| like_match(&pattern, r.0))
                    .map(|(c, coll, d, len)| {
                        vec![
                            Value::str(c),
                            Value::str(d),
                            Value::str(coll.name()),
                            Value::Int(*len as i64),
                        ]
                    })
                    .collect();
                Ok(typed_rows(
                    &[
                        ("Charset", ExprKind::String),
                        ("Description", ExprKind::String),
                        ("Default collation", ExprKind::String),
                        ("Maxlen", ExprKind::Int),
                    ],
                    rows,
                ))
            }
            Statement::ShowCollation { filter } => {
                let pattern = like_filter(filter.as_ref())?;
                let rows = crate::types::collation::Collation::ALL
                    .into_iter()
                    .filter(|c| like_match(&pattern, c.name()))
                    .map(|c| {
                        vec![
                            Value::str(c.name()),
                            Value::str(c.charset()),
                            Value::Int(c.id() as i64),
                            Value::str(if c.is_default() { "Yes" } else { "" }),
                            Value::str("Yes"),
                            Value::Int(1),
                            Value::str(if c.pad_space() { "PAD SPACE" } else { "NO PAD" }),
                        ]
                    })
                    .collect();
                Ok(typed_rows(
                    &[
                        ("Collation", ExprKind::String),
                        ("Charset", ExprKind::String),
                        ("Id", ExprKind::Int),
                        ("Default", ExprKind::String),
                        ("Compiled", ExprKind::String),
                        ("Sortlen", ExprKind::Int),
                        ("Pad_attribute", ExprKind::String),
                    ],
                    rows,
                ))
            }
            Statement::ShowStatus { filter, global, .. } => {
                let pattern = like_filter(filter.as_ref())?;
                let mut rows: Vec<(String, String)> = self
                    .state
                    .status_rows(*global)
                    .into_iter()
                    .map(|(n, v)| (n, v.to_string()))
                    .collect();
                rows.extend(self.binlog_status_rows(*global));
                rows.extend(self.state.engine.binlog.semi_sync().status_rows());
                rows.sort_by_key(|r| r.0.to_ascii_lowercase());
                let rows = rows
                    .into_iter()
                    .filter(|r| like_match_ci(&pattern, &r.0))
                    .map(|(n, v)| vec![Value::str(&n), Value::str(&v)])
                    .collect();
                Ok(text_rows(&["Variable_name", "Value"], rows))
            }
            Statement::ExplainTable { table_name, .. } => self.describe(cat, table_name),
            Statement::ShowProcessList { full } => self.show_processlist(cat, *full),
            other => Err(Error::Unsupported(statement_kind(other))),
        }
    }
}

impl Session {
    /// SHOW [FULL] PROCESSLIST: every session for an account with PROCESS, its
    /// own user's otherwise; Info is cut to 100 characters without FULL.
    fn show_processlist(&mut self, cat: &Arc<Catalog>, full: bool) -> Result<QueryResult> {
        let engine = self.state.engine.clone();
        let see_all = self
            .state
            .account(cat)
            .is_some_and(|a| a.allows_global(Privs::PROCESS));
        let rows = process_rows(&engine, &self.state.user, see_all)
            .into_iter()
            .map(|p| {
                // Info: the statement, its first 100 characters without FULL.
                let info = if !p.running {
                    Value::Null
                } else if full {
                    Value::str(&p.info)
                } else {
                    Value::str(&p.info.chars().take(100).collect::<String>())
                };
                vec![
                    Value::UInt(p.id as u64),
                    Value::str(&p.user),
                    Value::str(&p.host),
                    p.db.as_deref().map_or(Value::Null, Value::str),
                    Value::str(if p.running { "Query" } else { "Sleep" }),
                    Value::Int(p.time),
                    Value::str(if p.running { "executing" } else { "" }),
                    info,
                ]
            })
            .collect();
        use ExprKind::{Int, String as Str, UInt};
        Ok(typed_rows(
            &[
                ("Id", UInt),
                ("User", Str),
                ("Host", Str),
                ("db", Str),
                ("Command", Str),
                ("Time", Int),
                ("State", Str),
                ("Info", Str),
            ],
            rows,
        ))
    }
}

/// `text` as a single-quoted SQL string literal, as SHOW CREATE TABLE
/// writes one (`'` doubled, `\` escaped).
fn sql_string(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
}

/// A column's DEFAULT as SHOW CREATE TABLE prints it: a BIT column's as a
/// bit literal (`b'101'`), a number column's bare under MariaDB's
/// presentation, everything else quoted with MySQL's escapes
/// (`append_unescaped`: `\0`, `\n`, `\r`, `\Z`, `\\`, `''`).
fn shown_default(ty: crate::types::SqlType, v: &str, mariadb: bool) -> String {
    if let crate::types::SqlType::Bit(_) = ty {
        if let Ok(n) = v.parse::<u64>() {
            return format!("b'{n:b}'");
        }
    }
    if mariadb && ty.is_numeric() {
        return v.to_string();
    }
    let mut out = String::with_capacity(v.len() + 2);
    out.push('\'');
    for ch in v.chars() {
        match ch {
            '\0' => out.push_str("\\0"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\x1a' => out.push_str("\\Z"),
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("''"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}
