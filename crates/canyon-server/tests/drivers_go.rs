//! Go's database/sql with github.com/go-sql-driver/mysql against a real server.
//! The driver tests are a Go test package in `tests/go/` (its own module; go.mod
//! and go.sum pin the driver); this test starts a server and runs `go test` there
//! with `CANYON_HOST`, `CANYON_PORT`, `CANYON_USER` and `CANYON_PASSWORD` set.
//! Every Go test runs with interpolateParams=false (server-side prepared
//! statements) and =true (text protocol).
//!
//! Modules come from the Go module proxy into the ordinary module cache (outside
//! the clone); scripts/install-deps.sh downloads them ahead. Without Go (on PATH
//! or in /usr/local/go) the test is skipped loudly, and fails under CI.

mod common;

use common::{find_program, run_bounded, skip_missing, Server, CLIENT_TIMEOUT};
use std::path::PathBuf;
use std::process::Command;

/// The Go toolchain: `go` on PATH, else /usr/local/go/bin/go.
fn go() -> Option<PathBuf> {
    find_program("go").or_else(|| {
        let p = PathBuf::from("/usr/local/go/bin/go");
        p.is_file().then_some(p)
    })
}

#[test]
fn go_sql_driver_mysql() {
    let Some(go) = go() else {
        skip_missing("go");
        return;
    };
    let server = Server::start();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/go");
    let mut cmd = Command::new(go);
    cmd.args(["test", "-count=1", "-v", "./..."])
        .current_dir(dir)
        // go.mod and go.sum are committed: never rewrite them; no toolchain
        // downloads; no VCS stamping (the clone may not be a git work tree).
        .env("GOFLAGS", "-mod=readonly -buildvcs=false")
        .env("GOTOOLCHAIN", "local")
        .env("CANYON_HOST", "127.0.0.1")
        .env("CANYON_PORT", server.port().to_string())
        .env("CANYON_USER", "root")
        .env("CANYON_PASSWORD", server.password());
    let out = run_bounded(&mut cmd, "", CLIENT_TIMEOUT);
    assert!(
        out.status.success(),
        "go test failed ({}):\n{}\n{}\n{}",
        out.status,
        out.stdout,
        out.stderr,
        server.log_tail()
    );
    eprintln!("{}", out.stdout);
}
