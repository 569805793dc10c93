//! ANALYZE on the instance: measuring a table's statistics (`crate::catalog::stats`)
//! and storing them, on demand or in the background after enough writes.

use crate::catalog::engine::*;
use crate::catalog::Table;
use canyon_common::Result;
use canyon_storage::{Keyspace, WriteBatch};
use canyon_txn::IsolationLevel;
use std::sync::Arc;
use std::time::Duration;

impl Engine {
    /// CHECK TABLE: the table's live rows counted against the entries of
    /// its primary key and of each complete index, at the latest committed
    /// state (keys only, as an analysis reads them). `None` when they agree;
    /// else what differs, as the row's message. The scans are not one
    /// snapshot: a write committed between two of them can make the counts
    /// differ for a table that is whole (InnoDB checks in one read view);
    /// such a report does not repeat on a quiet table.
    pub(crate) fn check_table(&self, table: &Table) -> Result<Option<String>> {
        let session = self.txn.session();
        let mut txn = session.begin(IsolationLevel::ReadCommitted);
        let reader = txn.reader(canyon_txn::ReadMode::Current)?;
        let mut rows = 0u64;
        reader.scan_live_keys(table.def.id, &mut |_| rows += 1)?;
        let mut problem = None;
        for (_, idx) in table.def.ordered_indexes() {
            let mut entries = 0u64;
            reader.scan_live_index_keys(idx.id, &mut |_, _| entries += 1)?;
            if entries != rows && problem.is_none() {
                problem = Some(format!(
                    "Index '{}' has {entries} entries for {rows} rows",
                    idx.name
                ));
            }
        }
        txn.rollback();
        Ok(problem)
    }

    /// Analyses `table` (see `crate::catalog::stats`) in a transaction of its own,
    /// installs the result and persists it.
    pub(crate) fn analyze_table(
        &self,
        table: &Table,
        method: crate::catalog::stats::Method,
    ) -> Result<()> {
        let session = self.txn.session();
        let mut txn = session.begin(IsolationLevel::ReadCommitted);
        table.stats.analysis_started();
        let r = crate::catalog::stats::analyze(table, &mut txn, method);
        txn.rollback();
        let ks = match r {
            Ok(ks) => ks,
            Err(e) => {
                table.stats.analysis_failed();
                return Err(e);
            }
        };
        if crate::catalog::temporary::is_temporary(table.def.id) {
            // A TEMPORARY table has no Meta records (crate::catalog::temporary,
            // invariant 1): its statistics live with it, in memory.
            table.stats.set(ks);
            return Ok(());
        }
        let mut batch = WriteBatch::default();
        batch.put(
            Keyspace::Meta,
            meta_key(META_STATS, &table.def.id.to_be_bytes()),
            json(&ks)?,
        );
        let r = self.storage.write(batch, false);
        table.stats.set(ks);
        r
    }

    /// Starts a background analysis of `table` after `delay` (the caller won
    /// the right to run it from [`crate::catalog::stats::TableStats::note_changes`]).
    /// While it waits the thread holds only a `Weak` on the engine, so that a
    /// closing engine (and its RocksDB lock) is not kept alive by it.
    pub(crate) fn spawn_analysis(self: &Arc<Self>, table: Arc<Table>, delay: Duration) {
        let weak = Arc::downgrade(self);
        let stats = table.stats.clone();
        let spawned = std::thread::Builder::new()
            .name("canyon-analyze".into())
            .spawn(move || {
                if !delay.is_zero() {
                    std::thread::sleep(delay);
                }
                let Some(engine) = weak.upgrade() else {
                    table.stats.unschedule();
                    return;
                };
                if !table.stats.begin_analysis() {
                    // An ANALYZE TABLE is scanning: it covers these changes.
                    table.stats.unschedule();
                    return;
                }
                let started = std::time::Instant::now();
                match engine.analyze_table(&table, table.stats.auto_method()) {
                    Ok(()) => tracing::debug!(
                        table = %table.def.name,
                        rows = table.stats.analysis().map_or(0, |ks| ks.rows),
                        sampled = table.stats.analysis().is_some_and(|ks| ks.sampled > 0),
                        ms = started.elapsed().as_millis() as u64,
                        "background analysis"
                    ),
                    Err(e) => {
                        tracing::warn!(table = %table.def.name, error = %e, "background analysis failed")
                    }
                }
                table.stats.unschedule();
            });
        if spawned.is_err() {
            stats.unschedule();
        }
    }
}
