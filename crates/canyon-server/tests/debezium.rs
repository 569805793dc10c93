//! Change data capture with Debezium (issue 25): Debezium 3.6.1.Final's
//! embedded engine and MySQL connector snapshot a Canyon table and stream its
//! changes from Canyon's binary log.
//!
//! `tests/java/Debezium.java` is one plain Java program, run with the
//! single-file source launcher (`java -cp JARS Debezium.java`, no build step)
//! against a server started here with `log_bin = true`. It creates a table of
//! many column types and fills it, starts the engine (`snapshot.mode =
//! initial`), checks the snapshot's READ events column by column, then makes
//! inserts, updates (before and after images, to and from NULL, several rows
//! in one statement) and deletes and checks the streamed events, their GTIDs
//! and `server_id`; then ALTER TABLE ADD COLUMN, its schema change event, and
//! rows written and updated with the new column; then stops the engine,
//! inserts a row, and starts it again from the stored offsets (Debezium
//! checks them with `SELECT GTID_SUBTRACT(...)`): that row arrives once, with
//! no new snapshot, then a delete made after the restart. It exits non-zero
//! on the first failed check.
//!
//! The jars are every artifact `tests/java/debezium/pom.xml` resolves to
//! (Debezium, Kafka Connect, Jackson, mysql-binlog-connector-java,
//! Connector/J), which scripts/install-deps.sh copies with Maven into
//! `~/.cache/canyon-tools/java/debezium`, with the pom beside them as the
//! mark of a finished install. Without java or that install the test is
//! skipped loudly, and fails under CI.

mod common;

use common::{find_program, run_bounded, skip_missing, tools_dir, Server, ServerOptions};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

const TESTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/java");

/// The installed jars, or `None` when the install is missing or was made from
/// another version of the pom.
fn jars() -> Option<Vec<PathBuf>> {
    let dir = tools_dir().join("java/debezium");
    let pom = std::fs::read(format!("{TESTS}/debezium/pom.xml")).expect("read the pom");
    if std::fs::read(dir.join("pom.xml")).ok()? != pom {
        return None;
    }
    let mut jars: Vec<PathBuf> = std::fs::read_dir(&dir)
        .ok()?
        .map(|e| e.expect("list the jar directory").path())
        .filter(|p| p.extension().is_some_and(|x| x == "jar"))
        .collect();
    jars.sort();
    Some(jars)
}

#[test]
fn debezium_snapshot_and_stream() {
    let Some(java) = find_program("java") else {
        skip_missing("java");
        return;
    };
    let Some(jars) = jars() else {
        skip_missing("Debezium 3.6.1.Final (~/.cache/canyon-tools/java/debezium)");
        return;
    };
    let classpath = std::env::join_paths(&jars).expect("jar paths without ':'");
    let server = Server::start_with(ServerOptions {
        extra_toml: "log_bin = true\nserver_id = 7\n".into(),
        ..ServerOptions::default()
    });
    let work = tempfile::Builder::new()
        .prefix("canyon-debezium-")
        .tempdir()
        .expect("create a directory for Debezium's offsets");
    let mut cmd = Command::new(java);
    cmd.arg("-cp")
        .arg(classpath)
        // DATETIME and TIMESTAMP values are compared as UTC wall-clock values.
        .arg("-Duser.timezone=UTC")
        .arg("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")
        .arg(format!("{TESTS}/Debezium.java"))
        .env("CANYON_HOST", "127.0.0.1")
        .env("CANYON_PORT", server.port().to_string())
        .env("CANYON_USER", "root")
        .env("CANYON_PASSWORD", server.password())
        .env("CANYON_WORK", work.path());
    let out = run_bounded(&mut cmd, "", Duration::from_secs(600));
    assert!(
        out.status.success(),
        "Debezium.java failed ({}):\n{}\n{}\n{}",
        out.status,
        out.stdout,
        out.stderr,
        server.log_tail()
    );
    assert!(
        out.stdout.contains("Debezium.java: all checks passed"),
        "Debezium.java exited 0 without finishing:\n{}",
        out.stdout
    );
    eprintln!("{}", out.stdout);
}
