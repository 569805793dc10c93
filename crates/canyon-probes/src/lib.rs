//! USDT probes: static tracepoints at MySQL's DTrace provider points, so the
//! one-liners operators wrote for `mysqld` (DTrace on Solaris, SystemTap and
//! bpftrace on Linux) work on Canyon, plus Canyon's own points for row-lock
//! waits, commits and group-commit syncs.
//!
//! # What a probe costs
//! Each probe is a SystemTap SDT note (the ELF section `.note.stapsdt`, read
//! by `bpftrace -l`, `perf list sdt_*`, `gdb info probes`, `readelf -n`) and,
//! in the code, a `nop` guarded by the probe's *semaphore*: a `u16` in the
//! `.probes` section that a tracer increments when it attaches. With no
//! tracer the cost is one load of that `u16` and a predictable branch; the
//! arguments — including the NUL-terminated copies of strings the probes
//! pass, which allocate — are evaluated only when the semaphore is set
//! (`probe::probe_lazy!`). So the probes stay in every build.
//!
//! # The provider: `mysql`
//! Named as MySQL's (`probes_mysql.d`), with MySQL's argument order and
//! types where MySQL has the probe, so `usdt:/path/canyon:mysql:query__start`
//! in a script written for mysqld means the same here:
//!
//! | probe | arguments | fires |
//! |---|---|---|
//! | `connection__start` | `u64 conn_id, char *user, char *host` | a login succeeded |
//! | `connection__done` | `i64 status, u64 conn_id` | the connection ends (status 0: COM_QUIT, 1: dropped) |
//! | `query__start` | `char *query, u64 conn_id, char *db, char *user, char *host` | a client request (COM_QUERY, COM_STMT_EXECUTE) begins |
//! | `query__done` | `i64 status` | it ends (status 0: success, 1: error) |
//! | `query__parse__start` | `char *query` | parsing a request's text begins |
//! | `query__parse__done` | `i64 status` | parsing ends (0: parsed, 1: syntax or limit error) |
//! | `query__exec__start` | `char *query, u64 conn_id, char *db, char *user, char *host, i64 exec_type` | one statement's execution begins (exec_type 0: text, 1: prepared, as MySQL) |
//! | `query__exec__done` | `i64 status` | it ends |
//! | `row__lock__wait__start` | `u64 txn_id, u8 *key, u64 key_len, u64 holder_txn_id` | a transaction queues for a row lock another holds |
//! | `row__lock__wait__done` | `u64 txn_id, i64 status, u64 waited_us` | its wait ends (0: granted, 1: timed out, interrupted or withdrawn) |
//! | `commit__start` | `u64 txn_id` | a transaction's commit begins (its batch is prepared and written) |
//! | `commit__done` | `u64 txn_id, i64 status` | its batch is written, or failed (durability is the group commit's) |
//! | `group__commit__sync__start` | `u64 pending` | a group-commit leader starts the storage sync (`pending`: commits it may cover) |
//! | `group__commit__sync__done` | `u64 covered, u64 sync_ns, i64 status` | the sync ended: commits made durable, its time, 0 or 1 (failed) |
//!
//! MySQL has no row-lock, commit or group-commit probe of these names; its
//! handler-level lock probes (`handler__rdlock__start` ...) are table locks
//! of the storage-engine API, which Canyon does not have.
//! `row__lock__wait__done` fires on the thread that ends the wait — the
//! releasing transaction's for a grant, the waiter's for a timeout — so a
//! script matches start and done by `txn_id`, not by thread.
//!
//! Strings are NUL-terminated copies (a NUL inside the text ends it early);
//! they live for the probe's firing only, so a script copies them (`str()`)
//! at once, as for mysqld's.
//!
//! # Why a crate of its own
//! The probe macro expands to inline assembly, which is `unsafe`: this crate
//! is the one place that allows it (the workspace denies `unsafe_code`), and
//! the one list of probes the docs and the test read.
#![allow(unsafe_code)] // the `probe` crate's inline asm, in its macros only

use probe::probe_lazy;
use std::ffi::{c_char, CString};

/// A NUL-terminated copy of `s`, cut at its first NUL, kept in `slot` until
/// the caller returns; its pointer is the probe argument.
fn hold(slot: &mut Option<CString>, s: &str) -> *const c_char {
    let bytes = s.as_bytes();
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    // No NUL before `end`: `CString::new` cannot fail.
    slot.insert(CString::new(&bytes[..end]).unwrap_or_default())
        .as_ptr()
}

/// `connection__start`: a login succeeded.
#[inline]
pub fn connection_start(conn_id: u32, user: &str, host: &str) {
    let (mut u, mut h) = (None, None);
    probe_lazy!(
        mysql,
        connection__start,
        u64::from(conn_id),
        hold(&mut u, user),
        hold(&mut h, host)
    );
}

/// `connection__done`: the connection ended (`quit`: by COM_QUIT).
#[inline]
pub fn connection_done(quit: bool, conn_id: u32) {
    probe_lazy!(
        mysql,
        connection__done,
        i64::from(!quit),
        u64::from(conn_id)
    );
}

/// `query__start`: a client request begins.
#[inline]
pub fn query_start(query: &str, conn_id: u32, db: &str, user: &str, host: &str) {
    let (mut q, mut d, mut u, mut h) = (None, None, None, None);
    probe_lazy!(
        mysql,
        query__start,
        hold(&mut q, query),
        u64::from(conn_id),
        hold(&mut d, db),
        hold(&mut u, user),
        hold(&mut h, host)
    );
}

/// `query__done`: the request ended (`ok`: without an error).
#[inline]
pub fn query_done(ok: bool) {
    probe_lazy!(mysql, query__done, i64::from(!ok));
}

/// `query__parse__start`: parsing a request's text begins.
#[inline]
pub fn query_parse_start(query: &str) {
    let mut q = None;
    probe_lazy!(mysql, query__parse__start, hold(&mut q, query));
}

/// `query__parse__done`.
#[inline]
pub fn query_parse_done(ok: bool) {
    probe_lazy!(mysql, query__parse__done, i64::from(!ok));
}

/// `query__exec__start`: one statement's execution begins (`prepared`:
/// COM_STMT_EXECUTE, MySQL's exec_type 1).
#[inline]
pub fn query_exec_start(
    query: &str,
    conn_id: u32,
    db: &str,
    user: &str,
    host: &str,
    prepared: bool,
) {
    let (mut q, mut d, mut u, mut h) = (None, None, None, None);
    probe_lazy!(
        mysql,
        query__exec__start,
        hold(&mut q, query),
        u64::from(conn_id),
        hold(&mut d, db),
        hold(&mut u, user),
        hold(&mut h, host),
        i64::from(prepared)
    );
}

/// `query__exec__done`.
#[inline]
pub fn query_exec_done(ok: bool) {
    probe_lazy!(mysql, query__exec__done, i64::from(!ok));
}

/// `row__lock__wait__start`: `txn` queues for the lock on `key`, held by
/// `holder`.
#[inline]
pub fn row_lock_wait_start(txn: u64, key: &[u8], holder: u64) {
    probe_lazy!(
        mysql,
        row__lock__wait__start,
        txn,
        key.as_ptr(),
        key.len(),
        holder
    );
}

/// `row__lock__wait__done`: `txn`'s wait ended after `waited_us`.
#[inline]
pub fn row_lock_wait_done(txn: u64, granted: bool, waited_us: u64) {
    probe_lazy!(
        mysql,
        row__lock__wait__done,
        txn,
        i64::from(!granted),
        waited_us
    );
}

/// `commit__start`.
#[inline]
pub fn commit_start(txn: u64) {
    probe_lazy!(mysql, commit__start, txn);
}

/// `commit__done`: the commit's batch is written (`ok`) or failed.
#[inline]
pub fn commit_done(txn: u64, ok: bool) {
    probe_lazy!(mysql, commit__done, txn, i64::from(!ok));
}

/// `group__commit__sync__start`: a leader begins the storage sync.
#[inline]
pub fn group_commit_sync_start(pending: u64) {
    probe_lazy!(mysql, group__commit__sync__start, pending);
}

/// `group__commit__sync__done`.
#[inline]
pub fn group_commit_sync_done(covered: u64, sync_ns: u64, ok: bool) {
    probe_lazy!(
        mysql,
        group__commit__sync__done,
        covered,
        sync_ns,
        i64::from(!ok)
    );
}

/// Every probe: (name, argument count), in the module doc's order. The
/// server test checks the built binary's ELF notes against it.
pub const PROBES: [(&str, usize); 14] = [
    ("connection__start", 3),
    ("connection__done", 2),
    ("query__start", 5),
    ("query__done", 1),
    ("query__parse__start", 1),
    ("query__parse__done", 1),
    ("query__exec__start", 6),
    ("query__exec__done", 1),
    ("row__lock__wait__start", 4),
    ("row__lock__wait__done", 3),
    ("commit__start", 1),
    ("commit__done", 2),
    ("group__commit__sync__start", 1),
    ("group__commit__sync__done", 3),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_without_a_tracer_evaluate_nothing_and_do_not_fail() {
        // No tracer is attached in a test: every probe is its NOP.
        connection_start(1, "root", "127.0.0.1");
        query_start("SELECT 1", 1, "", "root", "127.0.0.1");
        query_parse_start("SELECT \0 1");
        query_exec_start("SELECT 1", 1, "test", "root", "h", true);
        row_lock_wait_start(7, b"key", 8);
        row_lock_wait_done(7, true, 10);
        commit_start(7);
        commit_done(7, true);
        group_commit_sync_start(3);
        group_commit_sync_done(3, 1000, true);
        query_exec_done(true);
        query_parse_done(true);
        query_done(true);
        connection_done(true, 1);
        let mut slot = None;
        let p = hold(&mut slot, "ab\0cd");
        assert!(!p.is_null());
        assert_eq!(slot.as_deref().map(|c| c.to_bytes()), Some(&b"ab"[..]));
    }
}
