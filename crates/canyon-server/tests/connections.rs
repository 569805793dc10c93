//! Many idle connections: 10,000 authenticated connections stay open at once (one
//! async task each on the server, not a thread: ARCHITECTURE.md), and meanwhile a
//! fresh connection runs a query and a sample of the idle ones answer COM_PING.
//!
//! The test raises its own RLIMIT_NOFILE soft limit to the hard limit (the server
//! it starts inherits it, and raises its own too); it skips, loudly, only where the
//! hard limit cannot hold 10,000 sockets on each side.

mod common;

use common::client::Client;
use common::{Mariadb, ServerOptions};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

const CONNECTIONS: usize = 10_000;
/// Threads opening connections in parallel (handshakes cost a SHA1 each side).
const OPENERS: usize = 4;
const _: () = assert!(
    CONNECTIONS.is_multiple_of(OPENERS),
    "each opener opens an equal share"
);

/// Raises RLIMIT_NOFILE; false (after a message) if the hard limit is too low.
fn raise_fd_limit(need: u64) -> bool {
    let got = rlimit::increase_nofile_limit(u64::MAX).unwrap_or(0);
    if got < need {
        eprintln!(
            "\n!!!!!!!! RLIMIT_NOFILE can only be raised to {got}, {need} are needed: \
             SKIPPING the {CONNECTIONS}-connection test (raise the hard limit, e.g. \
             `ulimit -Hn 65536` as root) !!!!!!!!\n"
        );
        return false;
    }
    true
}

/// Opens `CONNECTIONS` authenticated connections to `port` from several threads.
fn open_all(port: u16, user: &str, password: &str) -> Vec<Client> {
    let failures = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..OPENERS)
        .map(|i| {
            let (user, password) = (user.to_string(), password.to_string());
            let failures = Arc::clone(&failures);
            thread::spawn(move || {
                let n = CONNECTIONS / OPENERS;
                let mut mine = Vec::with_capacity(n);
                for k in 0..n {
                    match Client::connect(port, &user, &password) {
                        Ok(c) => mine.push(c),
                        Err(e) => {
                            // Stop at the first failure: the count says how far it got.
                            eprintln!(
                                "opener {i}: connection {k} failed after {} open: {e}",
                                mine.len()
                            );
                            failures.fetch_add(1, Ordering::Relaxed);
                            break;
                        }
                    }
                }
                mine
            })
        })
        .collect();
    let mut all = Vec::with_capacity(CONNECTIONS);
    for h in handles {
        all.extend(h.join().expect("opener thread panicked"));
    }
    assert_eq!(
        failures.load(Ordering::Relaxed),
        0,
        "only {} of {CONNECTIONS} connections could be opened",
        all.len()
    );
    all
}

/// With every connection open: a fresh one queries, a sample of the idle ones
/// answer COM_PING; then all close and the server still answers.
fn exercise(port: u16, user: &str, password: &str) {
    let mut idle = open_all(port, user, password);
    assert_eq!(idle.len(), CONNECTIONS);

    let mut fresh = Client::connect(port, user, password)
        .unwrap_or_else(|e| panic!("a fresh connection beside {CONNECTIONS} idle ones: {e}"));
    assert_eq!(
        fresh.exec("SELECT 1 + 1").scalar().as_deref(),
        Some("2"),
        "a query beside {CONNECTIONS} idle connections"
    );
    let ids: std::collections::HashSet<u32> =
        idle.iter().map(|c| c.greeting.connection_id).collect();
    assert_eq!(ids.len(), CONNECTIONS, "connection ids must be distinct");
    for k in (0..CONNECTIONS).step_by(997).chain([CONNECTIONS - 1]) {
        idle[k]
            .ping()
            .unwrap_or_else(|e| panic!("idle connection {k} does not answer COM_PING: {e}"));
    }
    for c in idle.drain(..) {
        c.quit();
    }
    fresh
        .ping()
        .expect("the fresh connection after the others closed");
    let mut after = Client::connect(port, user, password).expect("a connection after closing all");
    assert_eq!(after.exec("SELECT 3").scalar().as_deref(), Some("3"));
}

#[test]
fn ten_thousand_idle_connections() {
    // Each connection is one socket here and one in the server (same limit, as the
    // server inherits it), plus a margin for files and pipes.
    if !raise_fd_limit(CONNECTIONS as u64 + 500) {
        return;
    }
    let mut server = common::Server::start_with(ServerOptions {
        in_memory: true,
        max_connections: Some(CONNECTIONS as u32 + 100),
        ..ServerOptions::default()
    });
    let password = server.password().to_string();
    exercise(server.port(), "root", &password);
    server.assert_running();
}

/// The same against MariaDB, to show the client side of the test holds up.
#[test]
#[ignore = "checks the harness, not Canyon; needs a MariaDB allowed 10,000 connections"]
fn ten_thousand_idle_connections_on_mariadb() {
    if !raise_fd_limit(CONNECTIONS as u64 + 500) {
        return;
    }
    let Some(db) = Mariadb::start_with(&[
        "--max-connections=10100",
        "--open-files-limit=20000",
        "--thread-handling=pool-of-threads",
    ]) else {
        return;
    };
    exercise(db.port(), "root", db.password());
}
