//! Partitioned tables as the session runs their DDL: CREATE TABLE ...
//! PARTITION BY and ALTER TABLE's partition operations (privilege check,
//! the implicit commit, then `crate::ddl::partition` for the definition,
//! `crate::exec::partition` for the rows, and one ALTER of the catalog).
//!
//! There is no metadata lock to keep writers out while a partition
//! operation runs (see `crate::catalog`'s "no MDL"); the order of the steps
//! makes the outcome one that a serial order of the statements gives:
//!
//! - DROP PARTITION deletes the partitions' rows in one transaction, which
//!   commits, and then publishes the definition without them. A row a
//!   concurrent writer adds to a dropped range between the two steps
//!   survives, in the neighbouring partition: as if it came after the DROP.
//!   (Deleting after publishing could not tell such a row from the
//!   neighbour's own rows.)
//! - ADD / COALESCE / REORGANIZE PARTITION, PARTITION BY and REMOVE
//!   PARTITIONING publish the new definition first — `Engine::alter_table`
//!   returns once no statement runs on the older one, so every later write
//!   is placed under the new one — and then check that every stored row has
//!   a partition. If one has none (1526), the older definition is published
//!   again and the statement fails; writers that ran in between were held
//!   to the newer, stricter, definition.
//! - TRUNCATE PARTITION deletes in one transaction; a row a concurrent
//!   writer adds behind its scan survives, as if it came after.

use super::state::*;
use crate::catalog::partition::Partitioning;
use crate::catalog::{Catalog, Table};
use crate::ddl::alter::AlterOp;
use crate::ddl::partition as part;
use crate::parse::partition::{PartitionOp, PartitionSpec};
use crate::plan::partition::Router;
use crate::types::result::QueryResult;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use sqlparser::ast::Statement;
use std::sync::Arc;

impl Session {
    /// CREATE TABLE ... PARTITION BY.
    pub(super) fn run_create_partitioned(
        &mut self,
        cat: &Arc<Catalog>,
        create: &Statement,
        spec: &PartitionSpec,
    ) -> Result<QueryResult> {
        let Statement::CreateTable(ct) = create else {
            return Err(Error::Internal(
                "a partitioned CREATE that is no CREATE TABLE".into(),
            ));
        };
        if ct.temporary {
            // MySQL 1562 ER_PARTITION_NO_TEMPORARY.
            return Err(Error::Sql {
                code: 1562,
                sqlstate: *b"HY000",
                message: "Cannot create temporary table with partitions".into(),
            });
        }
        if ct.query.is_some() || ct.like.is_some() {
            return Err(Error::Unsupported(
                "CREATE TABLE ... SELECT / LIKE with PARTITION BY".into(),
            ));
        }
        let (db, t) = self.split_name(&ct.name)?;
        self.state.check_db(cat, &db, "CREATE", Some(&t))?;
        let Some(database) = cat.databases.get(&db) else {
            return Err(Error::UnknownDatabase(db));
        };
        let mut new = crate::ddl::create_table(ct, database.default_collation)?;
        self.year_widths(new.columns.iter_mut())?;
        let zone = self.state.time_zone();
        for col in new.columns.iter_mut() {
            crate::catalog::timestamp_default_to_utc(col, &zone)?;
        }
        self.check_table_options(&mut new, &t)?;
        if !new.foreign_keys.is_empty() {
            return Err(part::foreign_keys_refused());
        }
        // The clause is checked against the definition the table will have.
        let draft = crate::ddl::finish(new.clone(), &db, &t, 0, &vec![0; new.indexes.len()]);
        new.partitioning = Some(part::build(spec, &Table::new(draft))?);
        self.commit()?;
        let checks = self.fk_checks()?;
        if !self
            .state
            .engine
            .create_table(&db, &t, new, ct.if_not_exists, checks)?
        {
            self.note(1050, format!("Table '{t}' already exists"));
        }
        Ok(ok(0))
    }

    /// ALTER TABLE t `<partition operation>`.
    pub(super) fn run_alter_partition(
        &mut self,
        cat: &Arc<Catalog>,
        name: &[String],
        op: &PartitionOp,
    ) -> Result<QueryResult> {
        let (db, t) = match name {
            [t] => (
                self.state.db.clone().ok_or(Error::NoDatabaseSelected)?,
                t.clone(),
            ),
            [d, t] => (d.clone(), t.clone()),
            _ => return Err(Error::Syntax("ALTER TABLE".into())),
        };
        self.state.check_db(cat, &db, "ALTER", Some(&t))?;
        let Some(table) = cat.table(&db, &t).cloned() else {
            return Err(Error::UnknownTable { db, table: t });
        };
        let hash = table
            .def
            .partitioning
            .as_ref()
            .is_some_and(|p| p.method.is_hash());
        // `copies`: the change rewrites every row in MySQL / MariaDB (a
        // repartitioning), which reports them as affected; here the rows are
        // only checked and counted.
        let (next, copies): (Option<Partitioning>, bool) = match op {
            PartitionOp::Unsupported(what) => return Err(Error::Unsupported(what.clone())),
            PartitionOp::Maintenance { verb, names } => {
                let p = part::current(&table.def)?;
                if let Some(names) = names {
                    part::positions(p, names, &verb.to_ascii_lowercase())?;
                }
                return Ok(self.maintenance(&db, &t, verb));
            }
            PartitionOp::Truncate(names) => {
                let p = part::current(&table.def)?;
                let targets = match names {
                    None => vec![true; p.partitions.len()],
                    Some(names) => {
                        let mut flags = vec![false; p.partitions.len()];
                        for i in part::positions(p, names, "TRUNCATE")? {
                            flags[i] = true;
                        }
                        flags
                    }
                };
                self.commit()?;
                self.delete_partitions(&table, &targets)?;
                return Ok(ok(0));
            }
            PartitionOp::Drop(names) => {
                let (next, gone) = part::drop(&table, names)?;
                let mut targets = vec![false; next.partitions.len() + gone.len()];
                for i in gone {
                    targets[i] = true;
                }
                self.commit()?;
                self.delete_partitions(&table, &targets)?;
                (Some(next), false)
            }
            PartitionOp::Add { partitions, count } => {
                (Some(part::add(&table, partitions, *count)?), hash)
            }
            PartitionOp::Coalesce(n) => (Some(part::coalesce(&table, *n)?), true),
            PartitionOp::Reorganize { from, into } => {
                (Some(part::reorganize(&table, from, into)?), hash)
            }
            PartitionOp::Remove => {
                part::current(&table.def)?;
                (None, true)
            }
            PartitionOp::PartitionBy(spec) => {
                if !cat.children_of(&db, &t).is_empty() {
                    return Err(part::foreign_keys_refused());
                }
                (Some(part::build(spec, &table)?), true)
            }
        };
        self.commit()?;
        // Two catalog changes where the rows are checked (a revert after a
        // bad row): a replica writes its position after them.
        crate::catalog::engine::several_changes();
        // Published first (the ALTER waits until no statement runs on the
        // older definition), then every stored row must have a partition
        // under it; if one has none, the older definition comes back.
        let old = table.def.partitioning.clone();
        self.publish(&db, &t, next.clone())?;
        let rows = if matches!(op, PartitionOp::Drop(_)) {
            // The remaining rows kept their partitions.
            0
        } else {
            match self.check_rows_under(&table, next.as_ref()) {
                Ok(n) => n,
                Err(e) => {
                    self.publish(&db, &t, old)?;
                    return Err(e);
                }
            }
        };
        let copied = if copies { rows } else { 0 };
        Ok(QueryResult::Ok {
            affected_rows: copied,
            last_insert_id: 0,
            info: format!("Records: {copied}  Duplicates: 0  Warnings: 0"),
            warnings: 0,
        })
    }

    /// Publishes `p` as the table's partitioning.
    fn publish(&mut self, db: &str, t: &str, p: Option<Partitioning>) -> Result<()> {
        self.state
            .engine
            .alter_table(db, t, vec![AlterOp::SetPartitioning(p.map(Box::new))])
    }

    /// Deletes the rows of the flagged partitions in one committed
    /// transaction.
    fn delete_partitions(&mut self, table: &Arc<Table>, targets: &[bool]) -> Result<u64> {
        let router = Router::new(table)?
            .ok_or_else(|| Error::Internal("partition rows of an unpartitioned table".into()))?;
        self.defer_waits_now = false;
        let n = self.with_txn(&[], true, None, |txn, ctx| {
            crate::exec::partition::delete_partitions(txn, table, &router, targets, ctx)
        })?;
        // An autocommitted statement may leave its durability wait pending
        // (deferred durability): a DDL waits for it here, before going on.
        self.settle()?;
        self.commit()?;
        Ok(n)
    }

    /// Checks that every stored row of `table` has a partition under `next`
    /// (`None`: unpartitioned); returns the row count.
    fn check_rows_under(&mut self, table: &Arc<Table>, next: Option<&Partitioning>) -> Result<u64> {
        let mut def = table.def.clone();
        def.partitioning = next.cloned();
        let probe = Table::new(def);
        let router = Router::new(&probe)?;
        self.defer_waits_now = false;
        let rows = self.with_txn(&[], false, None, |txn, ctx| {
            crate::exec::partition::check_rows(txn, &probe, router.as_ref(), ctx)
        })?;
        self.settle()?;
        self.commit()?;
        Ok(rows)
    }

    /// ANALYZE / CHECK / OPTIMIZE / REPAIR PARTITION: nothing to do on
    /// logical partitions; the result set InnoDB gives. REBUILD answers as
    /// an ALTER.
    fn maintenance(&mut self, db: &str, t: &str, verb: &str) -> QueryResult {
        if verb == "REBUILD" {
            return alter_ok();
        }
        let name = Value::str(&format!("{db}.{t}"));
        let op = Value::str(&verb.to_ascii_lowercase());
        let mut rows = Vec::new();
        if verb == "OPTIMIZE" {
            rows.push(vec![
                name.clone(),
                op.clone(),
                Value::str("note"),
                Value::str("Table does not support optimize on partitions. All partitions will be rebuilt and analyzed."),
            ]);
        }
        rows.push(vec![name, op, Value::str("status"), Value::str("OK")]);
        text_rows(&["Table", "Op", "Msg_type", "Msg_text"], rows)
    }
}
