//! DDL statements as the session runs them: privilege checks, the implicit
//! commit, then the `ddl` layer.

use super::{dispatch::*, state::*};
use crate::catalog::Catalog;
use crate::types::result::QueryResult;
use canyon_common::{Error, Result};
use sqlparser::ast::{self, Statement};
use std::sync::Arc;

impl Session {
    /// The session's `foreign_key_checks`.
    pub(super) fn fk_checks(&self) -> Result<bool> {
        Ok(self.state.get_var("foreign_key_checks")?.to_i64() != Some(0))
    }

    pub(super) fn split_name(&self, n: &ast::ObjectName) -> Result<(String, String)> {
        let parts = object_name(n);
        match parts.as_slice() {
            [t] => Ok((
                self.state.db.clone().ok_or(Error::NoDatabaseSelected)?,
                t.clone(),
            )),
            [d, t] => Ok((d.clone(), t.clone())),
            _ => Err(Error::Syntax(n.to_string())),
        }
    }
}

impl Session {
    /// ALTER TABLE ... DISABLE / ENABLE KEYS.
    pub(super) fn run_alter_keys(
        &mut self,
        cat: &Arc<Catalog>,
        table: &[String],
    ) -> Result<QueryResult> {
        let (db, t) = match table {
            [t] => (
                self.state.db.clone().ok_or(Error::NoDatabaseSelected)?,
                t.clone(),
            ),
            [d, t] => (d.clone(), t.clone()),
            _ => return Err(Error::Syntax("ALTER TABLE".into())),
        };
        self.state.check_db(cat, &db, "ALTER", Some(&t))?;
        if cat.table(&db, &t).is_none() {
            return Err(Error::UnknownTable { db, table: t });
        }
        self.commit()?;
        // What InnoDB answers: a note, nothing done.
        self.note(
            1031,
            format!("Table storage engine for '{t}' doesn't have this option"),
        );
        Ok(ok(0))
    }
}

impl Session {
    /// ALTER DATABASE: a new default character set and collation for the
    /// database's new tables (MySQL 8: the ALTER privilege on the database;
    /// its tables keep theirs).
    pub(super) fn run_alter_database(
        &mut self,
        cat: &crate::catalog::Catalog,
        db: Option<&str>,
        charset: &Option<String>,
        collation: &Option<String>,
    ) -> Result<QueryResult> {
        let name = match db {
            Some(d) => d.to_string(),
            None => self.state.db.clone().ok_or(Error::NoDatabaseSelected)?,
        };
        self.state.check_db(cat, &name, "ALTER", None)?;
        let Some(current) = cat.databases.get(&name).map(|d| d.default_collation) else {
            return Err(Error::UnknownDatabase(name));
        };
        // A CHARACTER SET alone takes its default collation; COLLATE alone
        // its own character set; neither (ENCRYPTION / READ ONLY only)
        // keeps the database's.
        let collation = if charset.is_none() && collation.is_none() {
            current
        } else {
            crate::types::collation::Collation::resolve(
                charset.as_deref(),
                collation.as_deref(),
                current,
            )?
        };
        self.commit()?;
        self.state.engine.alter_database(&name, collation)?;
        Ok(ok(1))
    }

    /// DDL statements: CREATE / DROP DATABASE, CREATE / DROP / ALTER /
    /// RENAME / TRUNCATE TABLE, CREATE / DROP INDEX (each commits first).
    ///
    /// Takes the catalog snapshot by value: the statements that change a
    /// table drop it before the `ddl` layer runs, as they always have.
    pub(super) fn run_ddl(
        &mut self,
        cat: super::temporary::Snapshot,
        stmt: &Statement,
    ) -> Result<QueryResult> {
        let engine = self.state.engine.clone();
        match stmt {
            Statement::CreateDatabase {
                db_name,
                if_not_exists,
                default_charset,
                default_collation,
                ..
            } => {
                let name = object_name(db_name).last().cloned().unwrap_or_default();
                self.state.check_db(&cat, &name, "CREATE", None)?;
                // Without a character set: the session's collation_server
                // (MySQL: "the server character set and collation").
                let server = self.state.get_var("collation_server")?.to_display();
                let server = crate::types::collation::Collation::from_name(&server)
                    .unwrap_or(crate::types::collation::Collation::DEFAULT);
                let collation = crate::types::collation::Collation::resolve(
                    default_charset.as_deref(),
                    default_collation.as_deref(),
                    server,
                )?;
                self.commit()?;
                let created = engine.create_database(&name, *if_not_exists, collation)?;
                if !created {
                    self.note(
                        1007,
                        format!("Can't create database '{name}'; database exists"),
                    );
                }
                Ok(ok(created as u64))
            }
            Statement::CreateSchema { .. } => {
                Err(Error::Unsupported("CREATE SCHEMA with options".into()))
            }
            // DROP TEMPORARY TABLE: temporary tables only, no commit.
            Statement::Drop {
                object_type: ast::ObjectType::Table,
                temporary: true,
                if_exists,
                names,
                ..
            } => {
                let mut unknown = Vec::new();
                for n in names {
                    let (db, t) = self.split_name(n)?;
                    if !self.drop_temporary(&db, &t)? {
                        unknown.push(format!("{db}.{t}"));
                    }
                }
                if unknown.is_empty() {
                    Ok(ok(0))
                } else if *if_exists {
                    self.unknown_tables_note(unknown);
                    Ok(ok(0))
                } else {
                    Err(Error::BadTable(unknown.join(",")))
                }
            }
            Statement::Drop {
                object_type,
                if_exists,
                names,
                table,
                ..
            } => {
                self.commit()?;
                match object_type {
                    ast::ObjectType::Database | ast::ObjectType::Schema => {
                        let mut n = 0;
                        for name in names {
                            let db = object_name(name).last().cloned().unwrap_or_default();
                            self.state.check_db(&cat, &db, "DROP", None)?;
                            match engine.drop_database(&db, *if_exists, self.fk_checks()?)? {
                                Some(k) => {
                                    n += k;
                                    if self.state.db.as_deref() == Some(db.as_str()) {
                                        self.state.db = None;
                                        self.state.process.set_db(None);
                                    }
                                }
                                None => self.note(
                                    1008,
                                    format!("Can't drop database '{db}'; database doesn't exist"),
                                ),
                            }
                        }
                        Ok(ok(n as u64))
                    }
                    ast::ObjectType::Table => {
                        let checks = self.fk_checks()?;
                        let all = names
                            .iter()
                            .map(|n| self.split_name(n))
                            .collect::<Result<Vec<_>>>()?;
                        if all.len() > 1 {
                            // One catalog change a table: none completes the statement.
                            crate::catalog::engine::several_changes();
                        }
                        let mut unknown = Vec::new();
                        for (i, (db, t)) in all.iter().enumerate() {
                            let (db, t) = (db.clone(), t.clone());
                            // A temporary table of the name hides the base one.
                            if self.drop_temporary(&db, &t)? {
                                continue;
                            }
                            self.state.check_db(&cat, &db, "DROP", Some(&t))?;
                            if !engine.drop_table(&db, &t, *if_exists, checks, &all[i + 1..])? {
                                unknown.push(format!("{db}.{t}"));
                            }
                        }
                        self.unknown_tables_note(unknown);
                        Ok(ok(0))
                    }
                    ast::ObjectType::Index => {
                        let table = table
                            .as_ref()
                            .ok_or_else(|| Error::Syntax("DROP INDEX needs ON table".into()))?;
                        let (db, t) = self.split_name(table)?;
                        self.state.check_db(&cat, &db, "INDEX", Some(&t))?;
                        for name in names {
                            let idx = object_name(name).last().cloned().unwrap_or_default();
                            engine.drop_index(&db, &t, &idx)?;
                        }
                        Ok(alter_ok())
                    }
                    other => Err(Error::Unsupported(format!("DROP {other}"))),
                }
            }
            Statement::CreateTable(ct) => self.run_create_table(cat, ct, None),
            Statement::CreateIndex(ci) => {
                let (db, t) = self.split_name(&ci.table_name)?;
                if self.state.temp.get(&db, &t).is_some() {
                    return Err(Error::Unsupported(
                        "CREATE INDEX on a TEMPORARY table".into(),
                    ));
                }
                self.state.check_db(&cat, &db, "INDEX", Some(&t))?;
                if cat.table(&db, &t).is_none() {
                    return Err(Error::UnknownTable { db, table: t });
                }
                let mut op = crate::ddl::alter::AlterOp::AddIndex {
                    name: ci
                        .name
                        .as_ref()
                        .and_then(|n| object_name(n).last().cloned()),
                    columns: crate::ddl::create_index_column_names(ci)?,
                    unique: ci.unique,
                    attrs: crate::ddl::index_attrs(
                        &ci.columns,
                        ci.using.as_ref(),
                        &ci.index_options,
                    )?,
                };
                let strict = self.strict_sql_mode();
                let mut notes = Vec::new();
                crate::ddl::comments::check_alter_comments(
                    std::slice::from_mut(&mut op),
                    strict,
                    &mut |c, m| notes.push((c, m)),
                )?;
                for (code, message) in notes {
                    self.warning(code, message);
                }
                self.commit()?;
                drop(cat);
                engine.alter_table(&db, &t, vec![op])?;
                Ok(alter_ok())
            }
            Statement::AlterTable(at) => {
                let (db, t) = self.split_name(&at.name)?;
                if self.state.temp.get(&db, &t).is_some() {
                    return self.alter_temporary(at, &db, &t);
                }
                self.state.check_db(&cat, &db, "ALTER", Some(&t))?;
                let Some(table) = cat.table(&db, &t) else {
                    if cat.view(&db, &t).is_some() {
                        return Err(crate::catalog::view::wrong_object(&db, &t, "BASE TABLE"));
                    }
                    return Err(Error::UnknownTable { db, table: t });
                };
                let default = table.def.default_collation;
                let checks = self.fk_checks()?;
                let mut ops =
                    crate::ddl::alter_ops(at, default, &table.def.columns, checks, &|n| {
                        self.split_name(n)
                    })?;
                self.check_alter_engine(&mut ops, &t)?;
                self.year_widths(ops.iter_mut().filter_map(|op| match op {
                    crate::ddl::alter::AlterOp::AddColumn { column, .. }
                    | crate::ddl::alter::AlterOp::ChangeColumn { column, .. } => Some(column),
                    _ => None,
                }))?;
                timestamp_defaults_to_utc(&mut ops, &table.def.columns, &self.state.time_zone())?;
                let strict = self.strict_sql_mode();
                let mut notes = Vec::new();
                crate::ddl::comments::check_alter_comments(&mut ops, strict, &mut |c, m| {
                    notes.push((c, m))
                })?;
                for (code, message) in notes {
                    self.warning(code, message);
                }
                for op in &ops {
                    if let crate::ddl::alter::AlterOp::RenameTo { db: to, .. } = op {
                        self.state.check_db(&cat, to, "CREATE", None)?;
                    }
                }
                // MySQL reports no record counts for a bare rename.
                let rename_only = ops
                    .iter()
                    .all(|o| matches!(o, crate::ddl::alter::AlterOp::RenameTo { .. }));
                self.commit()?;
                drop(cat);
                let zone = self.state.time_zone();
                let warnings = engine.alter_table_in_zone(&db, &t, ops, strict, &zone)?;
                let n = warnings.len();
                for (code, message) in warnings {
                    let (level, code) = crate::expr::eval::warning_level(code);
                    self.state.warnings.push((level, code, message));
                }
                Ok(if rename_only {
                    ok(0)
                } else if n > 0 {
                    QueryResult::Ok {
                        affected_rows: 0,
                        last_insert_id: 0,
                        info: format!("Records: 0  Duplicates: 0  Warnings: {n}"),
                        warnings: n as u16,
                    }
                } else {
                    alter_ok()
                })
            }
            Statement::RenameTable(list) => {
                let mut pairs = Vec::with_capacity(list.len());
                // Temporary tables are renamed in the session (MySQL allows
                // it), without a commit when every pair is one.
                if list.iter().all(|r| {
                    self.split_name(&r.old_name)
                        .is_ok_and(|(db, t)| self.state.temp.get(&db, &t).is_some())
                }) {
                    for r in list {
                        let (db, t) = self.split_name(&r.old_name)?;
                        let (to_db, to) = self.split_name(&r.new_name)?;
                        self.rename_temporary(&db, &t, &to_db, &to)?;
                    }
                    return Ok(ok(0));
                }
                for r in list {
                    let (db, t) = self.split_name(&r.old_name)?;
                    let (to_db, to) = self.split_name(&r.new_name)?;
                    if self.state.temp.get(&db, &t).is_some() {
                        return Err(Error::Unsupported(
                            "RENAME TABLE of temporary and base tables together".into(),
                        ));
                    }
                    self.state.check_db(&cat, &db, "ALTER", Some(&t))?;
                    self.state.check_db(&cat, &to_db, "CREATE", None)?;
                    pairs.push((db, t, to_db, to));
                }
                self.commit()?;
                drop(cat);
                // MySQL renames the pairs atomically; Canyon one after the other.
                if pairs.len() > 1 {
                    crate::catalog::engine::several_changes();
                }
                for (db, t, to_db, to) in pairs {
                    if engine.catalog().view(&db, &t).is_some() {
                        engine.rename_view(&db, &t, &to_db, &to)?;
                    } else {
                        engine.rename_table(&db, &t, &to_db, &to)?;
                    }
                }
                Ok(ok(0))
            }
            Statement::Truncate(tr) => {
                self.commit()?;
                for target in &tr.table_names {
                    let (db, t) = self.split_name(&target.name)?;
                    if self.truncate_temporary(&db, &t)? {
                        continue;
                    }
                    self.state.check_db(&cat, &db, "DROP", Some(&t))?;
                    engine.truncate_table(&db, &t, self.fk_checks()?)?;
                }
                Ok(ok(0))
            }
            // GRANT / REVOKE are parsed by `parse`; a form it does not know
            // never reaches sqlparser's (Snowflake-shaped) statements.
            other => Err(Error::Unsupported(statement_kind(other))),
        }
    }
}

/// A TIMESTAMP's literal default in an ALTER (a new or changed column, SET
/// DEFAULT) is the instant it names in the session's zone: kept as UTC text
/// (see `crate::catalog::timestamp_default_to_utc`).
fn timestamp_defaults_to_utc(
    ops: &mut [crate::ddl::alter::AlterOp],
    columns: &[crate::catalog::ColumnDef],
    zone: &crate::types::timezone::Zone,
) -> Result<()> {
    use crate::ddl::alter::AlterOp;
    for op in ops.iter_mut() {
        match op {
            AlterOp::AddColumn { column, .. } | AlterOp::ChangeColumn { column, .. } => {
                crate::catalog::timestamp_default_to_utc(column, zone)?;
            }
            AlterOp::SetDefault { name, default } => {
                let Some(col) = columns.iter().find(|c| c.name.eq_ignore_ascii_case(name)) else {
                    continue;
                };
                let mut probe = col.clone();
                probe.default = default.clone();
                crate::catalog::timestamp_default_to_utc(&mut probe, zone)?;
                *default = probe.default;
            }
            _ => {}
        }
    }
    Ok(())
}

impl Session {
    /// Note 1051 for the tables `DROP [TEMPORARY] TABLE IF EXISTS` did not
    /// find (`db.table`): one note per table, as MySQL 8 gives them; where
    /// the server presents itself as MariaDB, one note naming them all,
    /// comma-separated and cut to 100 characters as MariaDB's `%-.100T`
    /// cuts it (97 and `...`).
    fn unknown_tables_note(&mut self, unknown: Vec<String>) {
        use crate::catalog::config::Presentation;
        if unknown.is_empty() {
            return;
        }
        if self.state.engine.config().presentation != Presentation::Mariadb {
            for u in unknown {
                self.note(1051, format!("Unknown table '{u}'"));
            }
            return;
        }
        let all = unknown.join(",");
        let shown = if all.chars().count() > 100 {
            format!("{}...", all.chars().take(97).collect::<String>())
        } else {
            all
        };
        self.note(1051, format!("Unknown table '{shown}'"));
    }
}
