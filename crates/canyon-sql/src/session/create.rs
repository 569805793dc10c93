//! CREATE [TEMPORARY] TABLE in its three forms: with its columns written
//! out, `LIKE other`, and `... [AS] SELECT` (the derivations are
//! `crate::ddl::derive`'s).
//!
//! CREATE TABLE ... SELECT is atomic, as in MySQL 8.0 with atomic DDL: the
//! table is created, filled by the equivalent of `INSERT INTO t (columns)
//! SELECT ...` run as one statement, and dropped again if that fails, so an
//! error leaves nothing behind. A base table's CREATE commits the open
//! transaction first and the filled table after (DDL); a temporary one's
//! commits nothing (the rows belong to the open transaction, if any).

use super::state::*;
use super::temporary::Snapshot;
use crate::catalog::{Catalog, ColumnDef};
use crate::ddl::derive::{self, SelectColumn};
use crate::ddl::NewTable;
use crate::parse::Parsed;
use crate::types::result::QueryResult;
use canyon_common::{Error, Result};
use sqlparser::ast;

impl Session {
    /// CREATE [TEMPORARY] TABLE [IF NOT EXISTS] in any of its forms;
    /// `duplicates` is the IGNORE (false) or REPLACE (true) of a CREATE
    /// TABLE ... SELECT.
    pub(super) fn run_create_table(
        &mut self,
        cat: Snapshot,
        ct: &ast::CreateTable,
        duplicates: Option<bool>,
    ) -> Result<QueryResult> {
        let (db, t) = self.split_name(&ct.name)?;
        // The privilege first (MySQL answers 1044 before 1049). A temporary
        // table needs CREATE TEMPORARY TABLES on the database, not CREATE.
        if ct.temporary {
            self.state
                .check_db(&cat, &db, "CREATE TEMPORARY TABLES", None)?;
        } else {
            self.state.check_db(&cat, &db, "CREATE", Some(&t))?;
        }
        let Some(database) = cat.databases.get(&db) else {
            return Err(Error::UnknownDatabase(db));
        };
        let default_collation = database.default_collation;
        let (mut new, columns) = match (&ct.like, &ct.query) {
            (Some(like), _) => (self.like_definition(&cat, like)?, None),
            (None, Some(q)) => {
                let mut declared = crate::ddl::create_table(ct, default_collation)?;
                self.year_widths(declared.columns.iter_mut())?;
                let select = self.select_columns(&cat, q)?;
                let names: Vec<String> = select.iter().map(|s| s.name.clone()).collect();
                (derive::merge_select_columns(declared, select)?, Some(names))
            }
            (None, None) => {
                let mut new = crate::ddl::create_table(ct, default_collation)?;
                self.year_widths(new.columns.iter_mut())?;
                (new, None)
            }
        };
        self.check_table_options(&mut new, &t)?;
        // A TIMESTAMP's literal default is the instant it names in this
        // session's zone (LIKE copies instants already).
        if ct.like.is_none() {
            let zone = self.state.time_zone();
            for col in new.columns.iter_mut() {
                crate::catalog::timestamp_default_to_utc(col, &zone)?;
            }
        }
        let created = if ct.temporary {
            self.create_temporary(&cat, &db, &t, new, ct.if_not_exists)?
        } else {
            self.commit()?;
            let checks = self.fk_checks()?;
            self.state
                .engine
                .create_table(&db, &t, new, ct.if_not_exists, checks)?
        };
        drop(cat);
        if !created {
            // MySQL 8: IF NOT EXISTS on an existing table inserts nothing.
            self.note(1050, format!("Table '{t}' already exists"));
            return Ok(ok(0));
        }
        let (Some(q), Some(names)) = (&ct.query, columns) else {
            return Ok(ok(0));
        };
        if !ct.temporary {
            // The binary log: the table as created, then (at the commit
            // below) its rows, as MySQL 8 logs CREATE ... SELECT.
            self.log_created_table(&db, &t)?;
        }
        match self.fill_created(&db, &t, &names, q, duplicates) {
            Ok(r) => {
                if !ct.temporary {
                    self.commit()?;
                }
                Ok(r)
            }
            Err(e) => {
                // Atomic: the table goes with the rows that failed.
                let undo = if ct.temporary {
                    self.drop_temporary(&db, &t).map(|_| ())
                } else {
                    self.state
                        .engine
                        .drop_table(&db, &t, true, false, &[])
                        .map(|_| ())
                };
                if let Err(u) = undo {
                    tracing::warn!(table = %t, error = %u, "CREATE ... SELECT not undone");
                } else if !ct.temporary {
                    let drop = format!(
                        "DROP TABLE IF EXISTS `{}`.`{}`",
                        db.replace('`', "``"),
                        t.replace('`', "``")
                    );
                    self.log_text(&drop)?;
                }
                Err(e)
            }
        }
    }

    /// The definition of CREATE TABLE ... LIKE: the source may be a base
    /// table or this session's temporary table, not a view (1347).
    fn like_definition(
        &mut self,
        cat: &Catalog,
        like: &ast::CreateTableLikeKind,
    ) -> Result<NewTable> {
        let (ast::CreateTableLikeKind::Plain(l) | ast::CreateTableLikeKind::Parenthesized(l)) =
            like;
        if l.defaults.is_some() {
            return Err(Error::Unsupported(
                "INCLUDING / EXCLUDING DEFAULTS in CREATE TABLE ... LIKE".into(),
            ));
        }
        let (db, t) = self.split_name(&l.name)?;
        self.state.check_db(cat, &db, "SELECT", Some(&t))?;
        match cat.table(&db, &t) {
            Some(src) => Ok(derive::like_table(&src.def)),
            None if cat.view(&db, &t).is_some() => {
                Err(crate::catalog::view::wrong_object(&db, &t, "BASE TABLE"))
            }
            None => Err(Error::UnknownTable { db, table: t }),
        }
    }

    /// The query's result columns as the columns they become: a table's
    /// column keeps its definition (type, nullability, collation, default,
    /// comment; not AUTO_INCREMENT), an expression's comes from the
    /// result-set metadata.
    fn select_columns(&mut self, cat: &Catalog, q: &ast::Query) -> Result<Vec<SelectColumn>> {
        let ctx = crate::plan::PlanContext::new(
            cat,
            self.state.db.as_deref(),
            self.state.connection_collation(),
        );
        let plan = crate::plan::select::plan_select(&ctx, q)?;
        Ok(plan.columns[..plan.visible]
            .iter()
            .map(|c| {
                let base = cat
                    .table(&c.schema, &c.org_table)
                    .and_then(|t| t.column(&c.org_name).map(|i| t.def.columns[i].clone()));
                let def = match base {
                    Some(b) => ColumnDef {
                        auto_increment: false,
                        added_default: None,
                        ..b
                    },
                    None => ColumnDef {
                        name: c.name.clone(),
                        ty: super::view::type_of(c),
                        nullable: c.flags & crate::types::result::column_flags::NOT_NULL == 0,
                        default: None,
                        auto_increment: false,
                        collation: self.state.connection_collation(),
                        added_default: None,
                        attrs: Default::default(),
                    },
                };
                SelectColumn {
                    name: c.name.clone(),
                    def,
                }
            })
            .collect())
    }

    /// Fills a table CREATE TABLE ... SELECT made: `INSERT [IGNORE] INTO
    /// db.t (names) <q>` (`REPLACE INTO` for REPLACE), run as one statement.
    fn fill_created(
        &mut self,
        db: &str,
        t: &str,
        names: &[String],
        q: &ast::Query,
        duplicates: Option<bool>,
    ) -> Result<QueryResult> {
        let quote = |n: &str| format!("`{}`", n.replace('`', "``"));
        let cols: Vec<String> = names.iter().map(|n| quote(n)).collect();
        let text = format!(
            "{} INTO {}.{} ({}) {q}",
            match duplicates {
                None => "INSERT",
                Some(false) => "INSERT IGNORE",
                Some(true) => "REPLACE",
            },
            quote(db),
            quote(t),
            cols.join(", ")
        );
        let mut parsed = crate::parse::parse(&text)?;
        let insert = match (parsed.pop(), parsed.is_empty()) {
            (Some(p @ Parsed::Sql(_)), true) => p,
            _ => {
                return Err(Error::Internal(
                    "CREATE ... SELECT's INSERT did not parse as one statement".into(),
                ))
            }
        };
        self.run_inner(&insert, &[], "")
    }

    /// What a new table's definition is checked for against the session's
    /// `sql_mode`: the ENGINE it names (one Canyon stands in for,
    /// `crate::ddl::storage_engine`; any other is 1286 under
    /// NO_ENGINE_SUBSTITUTION, else InnoDB with warnings 1286 and 1266, as
    /// MySQL substitutes the default engine) and its comments' lengths
    /// (`crate::ddl::comments::check_comments`).
    pub(super) fn check_table_options(&mut self, new: &mut NewTable, table: &str) -> Result<()> {
        if let Some(named) = new.engine.take() {
            new.engine = self.storage_engine(&named, table)?;
        }
        let strict = self.strict_sql_mode();
        let mut notes = Vec::new();
        crate::ddl::comments::check_comments(new, table, strict, &mut |c, m| notes.push((c, m)))?;
        for (code, message) in notes {
            self.warning(code, message);
        }
        Ok(())
    }

    /// The canonical name of the engine `named` for `table`: one Canyon
    /// stands in for; any other is 1286 under NO_ENGINE_SUBSTITUTION, else
    /// InnoDB (`None`) with warnings 1286 and 1266, as MySQL substitutes
    /// its default engine.
    fn storage_engine(&mut self, named: &str, table: &str) -> Result<Option<String>> {
        match crate::catalog::storage_engine(named) {
            Some(e) => Ok(Some(e.to_string())),
            None if self.sql_mode_has("NO_ENGINE_SUBSTITUTION") => Err(Error::Sql {
                code: 1286,
                sqlstate: *b"42000",
                message: format!("Unknown storage engine '{named}'"),
            }),
            None => {
                self.warning(1286, format!("Unknown storage engine '{named}'"));
                self.warning(
                    1266,
                    format!("Using storage engine InnoDB for table '{table}'"),
                );
                Ok(None)
            }
        }
    }

    /// ALTER TABLE ... ENGINE = name, checked as CREATE TABLE's
    /// ([`Session::storage_engine`]); a substituted engine leaves the
    /// table's as it is.
    pub(super) fn check_alter_engine(
        &mut self,
        ops: &mut Vec<crate::ddl::alter::AlterOp>,
        table: &str,
    ) -> Result<()> {
        use crate::ddl::alter::AlterOp;
        let mut checked = Vec::with_capacity(ops.len());
        for op in std::mem::take(ops) {
            match op {
                AlterOp::SetEngine(named) => {
                    if let Some(e) = self.storage_engine(&named, table)? {
                        checked.push(AlterOp::SetEngine(e));
                    }
                }
                other => checked.push(other),
            }
        }
        *ops = checked;
        Ok(())
    }
}
