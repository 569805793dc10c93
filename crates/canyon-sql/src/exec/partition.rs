//! What partitioning asks of writes and of the stored rows (partitions are
//! logical: see the essay in `crate::catalog::partition`).
//!
//! - `place_row`: every INSERT / UPDATE / REPLACE row is placed; a row no
//!   RANGE / LIST partition takes fails with 1526 (INSERT IGNORE turns that
//!   into a warning and skips the row).
//! - [`delete_partitions`]: TRUNCATE / DROP PARTITION delete the rows of the
//!   named partitions, with locking reads, inside the caller's transaction —
//!   so the deletion is atomic and durable at its commit, like a DELETE.
//! - [`check_rows`]: a changed partitioning (ADD, REORGANIZE, PARTITION BY)
//!   must still place every stored row, else the change fails with 1526.

use crate::catalog::rows::index_keys;
use crate::catalog::Table;
use crate::exec::for_each_locked_row;
use crate::expr::EvalContext;
use crate::plan::access::Access;
use crate::plan::partition::Router;
use crate::types::value::Value;
use canyon_common::Result;
use canyon_txn::Transaction;

/// Checks that `row` has a partition under `router` (none: unpartitioned).
pub(crate) fn place_row(
    router: Option<&Router>,
    row: &[Value],
    ctx: &dyn EvalContext,
) -> Result<()> {
    match router {
        None => Ok(()),
        Some(r) => match r.place(row, ctx)? {
            Ok(_) => Ok(()),
            Err(v) => Err(Router::no_partition(v)),
        },
    }
}

/// Deletes every row of `table` whose partition is flagged in `targets`;
/// returns how many.
pub fn delete_partitions(
    txn: &mut Transaction,
    table: &Table,
    router: &Router,
    targets: &[bool],
    ctx: &dyn EvalContext,
) -> Result<u64> {
    let mut deleted = 0;
    for_each_locked_row(
        txn,
        table,
        &Access::scan(),
        None,
        None,
        ctx,
        &mut |txn, pk, row| {
            if let Ok(i) = router.place(&row, ctx)? {
                if targets.get(i).copied().unwrap_or(false) {
                    txn.delete(table.def.id, pk, index_keys(table, &row));
                    crate::exec::journal::log_delete(txn, table, &row);
                    deleted += 1;
                }
            }
            Ok(())
        },
    )?;
    Ok(deleted)
}

/// Checks that every row of `table` has a partition under `router` (the
/// table's new partitioning; `None`: none, every row fits); returns the row
/// count — the rows MySQL reports copied by an ALTER that repartitions.
pub fn check_rows(
    txn: &mut Transaction,
    table: &Table,
    router: Option<&Router>,
    ctx: &dyn EvalContext,
) -> Result<u64> {
    let mut rows = 0;
    for_each_locked_row(
        txn,
        table,
        &Access::scan(),
        None,
        None,
        ctx,
        &mut |_, _, row| {
            rows += 1;
            place_row(router, &row, ctx)
        },
    )?;
    Ok(rows)
}
