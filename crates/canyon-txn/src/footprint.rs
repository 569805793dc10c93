//! What a transaction shows the SQL layer's schema changes: the tables it
//! has written and the snapshot it reads at. A DDL waits only for
//! transactions that wrote its table, and fails an older snapshot's read of
//! a table it rebuilt (P3 of canyon-sql's `ddl::alter`).

use crate::mvcc::Transaction;
use crate::{TableId, Timestamp};

impl Transaction {
    pub(crate) fn note_table_written(&mut self, table: TableId) {
        // Most transactions write one or a few tables: a short scan.
        if !self.tables_written.contains(&table) {
            self.tables_written.push(table);
        }
    }

    /// Every table this transaction has written (rolled-back statements
    /// included), in the order first written.
    pub fn tables_written(&self) -> &[TableId] {
        &self.tables_written
    }

    /// The snapshot the whole transaction reads at (REPEATABLE READ and
    /// SERIALIZABLE, once taken); `None` under READ COMMITTED, whose
    /// snapshots last a statement.
    pub fn transaction_snapshot(&self) -> Option<Timestamp> {
        if self.isolation.snapshot_per_transaction() {
            self.snapshot
        } else {
            None
        }
    }
}
