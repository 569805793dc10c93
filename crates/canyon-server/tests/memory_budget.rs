//! `memory_budget_bytes` (crates/canyon-server/src/memory.rs): under a budget
//! the server executes itself again with mimalloc's settings in its
//! environment, keeps an operator's own value, and serves as usual; without a
//! budget it does not. (How the budget is divided is the unit tests'; what it
//! does to memory is bench/memory_probe.sh's and bench/larger_than_memory.py's.)

mod common;

use common::{Server, ServerOptions};

/// The server process's environment, `NAME=VALUE` per entry.
fn environment(server: &Server) -> Vec<String> {
    let pid = server.pid().expect("the server runs");
    let raw = std::fs::read(format!("/proc/{pid}/environ")).expect("read its environment");
    raw.split(|&b| b == 0)
        .filter(|e| !e.is_empty())
        .map(|e| String::from_utf8_lossy(e).into_owned())
        .collect()
}

fn has(env: &[String], entry: &str) -> bool {
    env.iter().any(|e| e == entry)
}

#[test]
fn a_budget_restarts_the_server_with_the_allocator_settings() {
    let server = Server::start_with(ServerOptions {
        extra_toml: "memory_budget_bytes = 268435456\n".into(),
        // An operator's own value stands.
        env: vec![("MIMALLOC_PURGE_DELAY".into(), "5".into())],
        ..ServerOptions::default()
    });
    let env = environment(&server);
    assert!(has(&env, "MIMALLOC_ARENA_EAGER_COMMIT=0"), "{env:?}");
    assert!(has(&env, "MIMALLOC_PURGE_DELAY=5"), "{env:?}");
    assert!(!has(&env, "MIMALLOC_PURGE_DELAY=0"), "{env:?}");
    let mut c = server.client();
    c.exec("CREATE DATABASE d");
    c.exec("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20))");
    c.exec("INSERT INTO d.t VALUES (1, 'a'), (2, 'b')");
    assert_eq!(
        c.exec("SELECT COUNT(*) FROM d.t").scalar().as_deref(),
        Some("2")
    );
}

#[test]
fn without_a_budget_the_environment_is_left_alone() {
    let server = Server::start_with(ServerOptions::default());
    let env = environment(&server);
    assert!(
        !env.iter().any(|e| e.starts_with("MIMALLOC_")),
        "no budget, no allocator settings: {env:?}"
    );
}
