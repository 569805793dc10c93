//! The XA statements: MySQL 8's state machine of a session's XA branch
//! (`sql/xa.cc`), over canyon-txn's branches (`canyon_txn`'s `xa.rs`, which
//! holds prepared branches and makes them durable).
//!
//! ```text
//!            XA START x                XA END x              XA PREPARE x
//!  (none) ─────────────────▶ ACTIVE ───────────────▶ IDLE ────────────────▶ PREPARED
//!    ▲                                                 │  XA COMMIT x ONE PHASE │ XA COMMIT x
//!    └─────────────────────────────────────────────────┴──── XA ROLLBACK x ─────┘
//! ```
//!
//! - ACTIVE: statements run in the branch's transaction (`Session::txn`);
//!   COMMIT, ROLLBACK, BEGIN and every statement that commits implicitly
//!   (DDL, LOCK TABLES, SET autocommit = 1) fail with XAER_RMFAIL (1399), as
//!   MySQL's `trans_check_state`.
//! - IDLE, PREPARED: any statement that would use a transaction fails with
//!   XAER_RMFAIL; only XA statements move the branch.
//! - A deadlock rolls the branch's transaction back (as any transaction's);
//!   the branch stays ACTIVE with a *rollback error* (MySQL's `rm_error`):
//!   XA END and XA COMMIT answer XA_RBDEADLOCK (1614), the first moving it to
//!   ROLLBACK ONLY, from which XA ROLLBACK ends it. Statements in between
//!   answer 1614 too (MySQL would run them in no branch at all).
//! - XA START inside a normal transaction (BEGIN, or autocommit = 0 with a
//!   statement run) or under LOCK TABLES: XAER_OUTSIDE (1400). An xid in use
//!   anywhere on the server: XAER_DUPID (1440).
//! - XA COMMIT / ROLLBACK of an xid that is not the session's own: the branch
//!   must be prepared and detached (its session gone, or recovered after a
//!   restart), and this session must have no branch (1399) nor open
//!   transaction (1399 NON-EXISTING); otherwise XAER_NOTA (1397).
//! - PREPARED survives the session: when the session ends (disconnect, KILL,
//!   COM_RESET_CONNECTION) its claim drops and the branch is detached, with
//!   its locks, for any session to finish. ACTIVE and IDLE branches are
//!   rolled back then, as MySQL does.
//! - JOIN, RESUME of anything but this session's IDLE branch, and SUSPEND:
//!   XAER_INVAL (1398), as MySQL (which implements none of them).
//!
//! XA RECOVER lists every prepared branch, attached or not (MySQL lists every
//! PREPARED branch in its transaction cache), and needs XA_RECOVER_ADMIN
//! (1227 without it), as MySQL 8.0.19 and later. Finishing a detached branch
//! with XA COMMIT / ROLLBACK needs only its xid, as in MySQL: the privilege
//! guards the listing of other sessions' xids, not their use.

use super::state::*;
use crate::parse::xa::XaStatement;
use crate::types::result::QueryResult;
use crate::types::sqltype::ExprKind;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use canyon_txn::{XaClaim, XaError, Xid};

/// The phase of a session's XA branch (MySQL's names in [`XaPhase::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum XaPhase {
    Active,
    Idle,
    Prepared,
    RollbackOnly,
}

impl XaPhase {
    /// MySQL's `xa_state_names`.
    fn name(self) -> &'static str {
        match self {
            XaPhase::Active => "ACTIVE",
            XaPhase::Idle => "IDLE",
            XaPhase::Prepared => "PREPARED",
            XaPhase::RollbackOnly => "ROLLBACK ONLY",
        }
    }
}

/// The session's XA branch. Invariant (checked after each statement,
/// `Session::xa_after_statement`): ACTIVE and IDLE without a rollback error
/// have the session's transaction open; PREPARED and ROLLBACK ONLY have none.
#[derive(Debug)]
pub(super) struct XaBranch {
    /// The xid, held from XA START to the end of the branch; dropping it
    /// detaches a prepared branch.
    claim: XaClaim,
    phase: XaPhase,
    /// The transaction was rolled back under the branch (a deadlock).
    rolled_back: bool,
}

fn rmfail(state: &'static str) -> Error {
    XaError::RmFail(state).into()
}

impl Session {
    /// Runs one XA statement.
    pub(super) fn run_xa(&mut self, stmt: &XaStatement) -> Result<QueryResult> {
        match stmt {
            XaStatement::Start { xid, option } => self.xa_start(xid, *option),
            XaStatement::End { xid, suspend } => {
                if *suspend {
                    return Err(XaError::Inval.into());
                }
                let b = self.xa.as_mut().ok_or_else(|| rmfail("NON-EXISTING"))?;
                if b.phase != XaPhase::Active {
                    return Err(rmfail(b.phase.name()));
                }
                if b.claim.xid() != xid {
                    return Err(XaError::Nota.into());
                }
                if b.rolled_back {
                    b.phase = XaPhase::RollbackOnly;
                    return Err(XaError::RbDeadlock.into());
                }
                b.phase = XaPhase::Idle;
                Ok(ok(0))
            }
            XaStatement::Prepare(xid) => {
                let b = self.xa.as_ref().ok_or_else(|| rmfail("NON-EXISTING"))?;
                if b.phase != XaPhase::Idle {
                    return Err(rmfail(b.phase.name()));
                }
                if b.claim.xid() != xid {
                    return Err(XaError::Nota.into());
                }
                let mut t = self.txn.take().ok_or_else(|| {
                    Error::Internal("an IDLE XA branch without its transaction".into())
                })?;
                // The branch's binary-log record is made durable with it and
                // written when it commits (canyon-txn's xa.rs).
                self.attach_log(&mut t)?;
                let b = self.xa.as_mut().expect("checked above");
                match b.claim.prepare(t) {
                    Ok(()) => {
                        b.phase = XaPhase::Prepared;
                        Ok(ok(0))
                    }
                    Err(e) => {
                        // MySQL: a failed prepare rolls the branch back
                        // (the transaction is gone already) and ends it.
                        tracing::warn!(error = %e, "XA PREPARE failed; the branch is rolled back");
                        self.xa = None;
                        Err(XaError::RbRollback.into())
                    }
                }
            }
            XaStatement::Commit { xid, one_phase } => self.xa_end_branch(xid, Some(*one_phase)),
            XaStatement::Rollback(xid) => self.xa_end_branch(xid, None),
            XaStatement::Recover { convert_xid } => Ok(self.xa_recover(*convert_xid)),
        }
    }

    fn xa_start(&mut self, xid: &Xid, option: Option<&'static str>) -> Result<QueryResult> {
        if option == Some("RESUME") {
            if let Some(b) = self.xa.as_mut().filter(|b| b.phase == XaPhase::Idle) {
                if b.claim.xid() != xid {
                    return Err(XaError::Nota.into());
                }
                b.phase = XaPhase::Active;
                return Ok(ok(0));
            }
        }
        if option.is_some() {
            return Err(XaError::Inval.into());
        }
        if let Some(b) = &self.xa {
            return Err(rmfail(b.phase.name()));
        }
        if self.txn.is_some() || self.state.locked_tables.is_some() {
            return Err(XaError::Outside.into());
        }
        let claim = self.state.engine.txn.xa_start(xid.clone())?;
        let iso = self
            .state
            .next_isolation
            .take()
            .unwrap_or(self.state.isolation);
        self.state.txn_read_only = self
            .state
            .next_read_only
            .take()
            .unwrap_or(self.state.read_only);
        let mut t = self.txn_session.begin(iso);
        t.set_lock_wait_timeout(self.state.lock_wait_timeout);
        t.set_interrupt(Some(self.state.process.kill_flag().clone()));
        self.state.journal(&mut t);
        self.txn = Some(t);
        self.xa = Some(XaBranch {
            claim,
            phase: XaPhase::Active,
            rolled_back: false,
        });
        Ok(ok(0))
    }

    /// XA COMMIT (`one_phase` `Some`) or XA ROLLBACK (`None`).
    fn xa_end_branch(&mut self, xid: &Xid, one_phase: Option<bool>) -> Result<QueryResult> {
        let commit = one_phase.is_some();
        if self.xa.as_ref().is_none_or(|b| b.claim.xid() != xid) {
            // Another session's branch, detached (MySQL's "external" XA).
            if let Some(b) = &self.xa {
                return Err(rmfail(b.phase.name()));
            }
            if self.txn.is_some() {
                // MySQL looks the xid up first, then refuses an open
                // transaction.
                return Err(if self.state.engine.txn.xa_is_detached(xid) {
                    rmfail("NON-EXISTING")
                } else {
                    XaError::Nota.into()
                });
            }
            self.state.engine.txn.xa_finish_detached(xid, commit)?;
            self.count_branch_end(commit);
            self.note_prepared_commit(commit);
            return Ok(ok(0));
        }
        let mut b = self.xa.take().expect("checked above");
        if commit && b.rolled_back {
            if let Some(t) = self.txn.take() {
                t.rollback();
            }
            return Err(XaError::RbDeadlock.into());
        }
        match (b.phase, one_phase) {
            (XaPhase::Idle, Some(true)) => {
                let t = self.txn.take().ok_or_else(|| {
                    Error::Internal("an IDLE XA branch without its transaction".into())
                })?;
                self.count(crate::catalog::status::Counter::HandlerCommit);
                self.commit_txn(t, true)?;
            }
            (XaPhase::Prepared, Some(false)) | (XaPhase::Prepared, None) => {
                if let Err(e) = b.claim.finish_prepared(commit) {
                    // Still prepared, still this session's.
                    self.xa = Some(b);
                    return Err(e);
                }
                self.count_branch_end(commit);
                self.note_prepared_commit(commit);
            }
            (XaPhase::Idle, None) => {
                if let Some(t) = self.txn.take() {
                    self.count_branch_end(false);
                    t.rollback();
                }
            }
            // Rolled back already (the deadlock); the branch ends.
            (XaPhase::RollbackOnly, None) => {}
            (phase, _) => {
                self.xa = Some(b);
                return Err(rmfail(phase.name()));
            }
        }
        Ok(ok(0))
    }

    /// After the commit of a prepared branch: its log record (written with
    /// the commit, canyon-txn's xa.rs) is at or before the newest one, which
    /// semi-synchronous replication waits for — at worst a little longer
    /// than for the branch's own.
    fn note_prepared_commit(&self, commit: bool) {
        if commit && self.state.engine.binlog.enabled() {
            self.note_logged(Some(self.state.engine.txn.log_last_ts()));
        }
    }

    /// A branch's end in `Handler_commit` / `Handler_rollback`, as MySQL
    /// counts an XA COMMIT or ROLLBACK there.
    fn count_branch_end(&mut self, commit: bool) {
        use crate::catalog::status::Counter;
        self.count(if commit {
            Counter::HandlerCommit
        } else {
            Counter::HandlerRollback
        });
    }

    /// XA RECOVER [CONVERT XID]: MySQL 8's four columns; `data` is gtrid ++
    /// bqual, raw or (CONVERT XID) as `0x` and hex.
    fn xa_recover(&self, convert_xid: bool) -> QueryResult {
        let rows = self
            .state
            .engine
            .txn
            .xa_recover()
            .into_iter()
            .map(|x| {
                let mut data = x.gtrid.clone();
                data.extend_from_slice(&x.bqual);
                let data = if convert_xid {
                    let mut s = String::from("0x");
                    for b in &data {
                        s.push_str(&format!("{b:02x}"));
                    }
                    s.into_bytes()
                } else {
                    data
                };
                vec![
                    Value::Int(x.format_id),
                    Value::Int(x.gtrid.len() as i64),
                    Value::Int(x.bqual.len() as i64),
                    Value::Bytes(data),
                ]
            })
            .collect();
        typed_rows(
            &[
                ("formatID", ExprKind::Int),
                ("gtrid_length", ExprKind::Int),
                ("bqual_length", ExprKind::Int),
                ("data", ExprKind::String),
            ],
            rows,
        )
    }

    /// Before a statement runs in the session's transaction: an XA branch
    /// allows it only while ACTIVE (1399 in another phase, 1614 after the
    /// branch was rolled back).
    pub(super) fn xa_check_statement(&self) -> Result<()> {
        match &self.xa {
            None => Ok(()),
            Some(b) if b.rolled_back => Err(XaError::RbDeadlock.into()),
            Some(b) if b.phase == XaPhase::Active => Ok(()),
            Some(b) => Err(rmfail(b.phase.name())),
        }
    }

    /// Before the session's transaction ends or a new one begins by anything
    /// but an XA statement (COMMIT, ROLLBACK, BEGIN, implicit commits):
    /// 1399 while a branch exists.
    pub(super) fn xa_check_end(&self) -> Result<()> {
        match &self.xa {
            None => Ok(()),
            Some(b) => Err(rmfail(b.phase.name())),
        }
    }

    /// After each statement: a branch whose transaction vanished (a
    /// deadlock victim, a statement that panicked) carries a rollback error.
    pub(super) fn xa_after_statement(&mut self) {
        let open = self.txn.is_some();
        if let Some(b) = self.xa.as_mut() {
            if matches!(b.phase, XaPhase::Active | XaPhase::Idle) && !open {
                b.rolled_back = true;
            }
        }
    }

    /// The session's branch ends with the session (or a reset): its
    /// transaction, if any, is rolled back first; a prepared branch is
    /// detached, with its locks, for another session to finish.
    pub(super) fn xa_release(&mut self) {
        if let Some(b) = self.xa.take() {
            if let Some(t) = self.txn.take() {
                t.rollback();
            }
            if b.phase == XaPhase::Prepared {
                tracing::info!(
                    conn = self.state.connection_id,
                    gtrid = %String::from_utf8_lossy(&b.claim.xid().gtrid),
                    "a prepared XA branch outlives its session"
                );
            }
        }
    }
}
