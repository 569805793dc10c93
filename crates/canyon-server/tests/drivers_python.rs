//! Real Python drivers against a real server: PyMySQL, mysql-connector-python and
//! the SQLAlchemy 2 ORM over PyMySQL (all from PyPI; scripts/install-deps.sh
//! installs them). The driver tests are
//! pytest files under `tests/python/`; this test starts a server and runs pytest
//! with `CANYON_HOST`, `CANYON_PORT`, `CANYON_USER` and `CANYON_PASSWORD` set.
//!
//! Without python3, pytest or the drivers the test is skipped loudly, and fails
//! under CI.

mod common;

use common::{find_program, in_ci, run_bounded, Server, CLIENT_TIMEOUT};
use std::process::Command;

/// Whether `python3 -c code` succeeds.
fn python_ok(code: &str) -> bool {
    Command::new("python3")
        .args(["-c", code])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Skips (returns `true`) when python3, pytest or a driver is missing, loudly;
/// under CI that fails the test instead.
fn skip_without_python_drivers() -> bool {
    let missing = if find_program("python3").is_none() {
        "python3"
    } else if !python_ok("import pytest") {
        "pytest"
    } else if !python_ok("import pymysql, mysql.connector") {
        "PyMySQL or mysql-connector-python"
    } else if !python_ok("import sqlalchemy; assert sqlalchemy.__version__.startswith('2.')") {
        "SQLAlchemy 2"
    } else {
        return false;
    };
    let msg = format!(
        "{missing} is not installed: run scripts/install-deps.sh (make deps). SKIPPING this test."
    );
    assert!(!in_ci(), "{msg} (not allowed under CI)");
    eprintln!("\n!!!!!!!! {msg} !!!!!!!!\n");
    true
}

#[test]
fn python_drivers() {
    if skip_without_python_drivers() {
        return;
    }
    let server = Server::start();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python");
    let mut cmd = Command::new("python3");
    cmd.args(["-m", "pytest", "-q", "-p", "no:cacheprovider", dir])
        // No __pycache__ or .pytest_cache in the source tree.
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("CANYON_HOST", "127.0.0.1")
        .env("CANYON_PORT", server.port().to_string())
        .env("CANYON_USER", "root")
        .env("CANYON_PASSWORD", server.password());
    let out = run_bounded(&mut cmd, "", CLIENT_TIMEOUT);
    assert!(
        out.status.success(),
        "pytest failed ({}):\n{}\n{}\n{}",
        out.status,
        out.stdout,
        out.stderr,
        server.log_tail()
    );
    eprintln!("{}", out.stdout);
}
