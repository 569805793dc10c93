//! JDBC against a real server: MySQL Connector/J (server-side and client-side
//! prepared statements) and MariaDB Connector/J, the versions in
//! `tests/java/jars.txt`. `tests/java/Drivers.java` is one plain Java program,
//! run with the single-file source launcher (`java -cp JARS Drivers.java`, no
//! build step) and `CANYON_HOST`, `CANYON_PORT`, `CANYON_USER` and
//! `CANYON_PASSWORD` set; it exits non-zero on the first failed check. Besides
//! plain JDBC it runs XA through each driver's XADataSource: a two-branch
//! transaction prepared and committed, a rollback, recover() of a branch
//! prepared by a closed connection, a one-phase commit, XAER_NOTA.
//!
//! scripts/install-deps.sh downloads the jars from Maven Central into
//! `~/.cache/canyon-tools/java`. Without java or a jar the test is skipped
//! loudly, and fails under CI.

mod common;

use common::{find_program, run_bounded, skip_missing, tools_dir, Server, CLIENT_TIMEOUT};
use std::path::PathBuf;
use std::process::Command;

const TESTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/java");

/// The jars named in tests/java/jars.txt, as paths in the tools directory
/// (`artifact-version.jar`, as Maven Central names them).
fn jars() -> Vec<PathBuf> {
    let list =
        std::fs::read_to_string(format!("{TESTS}/jars.txt")).expect("read tests/java/jars.txt");
    list.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let parts: Vec<&str> = l.split(':').collect();
            assert_eq!(parts.len(), 3, "jars.txt: not group:artifact:version: {l}");
            tools_dir().join(format!("java/{}-{}.jar", parts[1], parts[2]))
        })
        .collect()
}

#[test]
fn jdbc_drivers() {
    let Some(java) = find_program("java") else {
        skip_missing("java");
        return;
    };
    let jars = jars();
    if let Some(missing) = jars.iter().find(|j| !j.is_file()) {
        skip_missing(&missing.display().to_string());
        return;
    }
    let classpath = std::env::join_paths(&jars).expect("jar paths without ':'");
    let server = Server::start();
    let mut cmd = Command::new(java);
    cmd.arg("-cp")
        .arg(classpath)
        // Dates and timestamps are compared as the same wall-clock values.
        .arg("-Duser.timezone=UTC")
        .arg(format!("{TESTS}/Drivers.java"))
        .env("CANYON_HOST", "127.0.0.1")
        .env("CANYON_PORT", server.port().to_string())
        .env("CANYON_USER", "root")
        .env("CANYON_PASSWORD", server.password());
    let out = run_bounded(&mut cmd, "", CLIENT_TIMEOUT);
    assert!(
        out.status.success(),
        "Drivers.java failed ({}):\n{}\n{}\n{}",
        out.status,
        out.stdout,
        out.stderr,
        server.log_tail()
    );
    eprintln!("{}", out.stdout);
}
