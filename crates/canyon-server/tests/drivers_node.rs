//! Node.js's mysql2 against a real server. `tests/node/mysql2.test.js` runs under
//! node's built-in test runner (`node --test`) with `CANYON_HOST`, `CANYON_PORT`,
//! `CANYON_USER` and `CANYON_PASSWORD` set; every check goes through both
//! `query` (client-side interpolation, text protocol) and `execute` (server-side
//! prepared statements).
//!
//! `tests/node/package-lock.json` pins mysql2 and its dependencies;
//! scripts/install-deps.sh installs exactly that (`npm ci`) into
//! `~/.cache/canyon-tools/node`, never into the clone, and this test points
//! `NODE_PATH` there. Without node or the installed modules (or with modules from
//! a different lock file) the test is skipped loudly, and fails under CI.

mod common;

use common::{find_program, run_bounded, skip_missing, tools_dir, Server, CLIENT_TIMEOUT};
use std::process::Command;

const TESTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/node");

#[test]
fn node_mysql2() {
    let Some(node) = find_program("node") else {
        skip_missing("node");
        return;
    };
    let installed = tools_dir().join("node");
    let lock = std::fs::read(format!("{TESTS}/package-lock.json")).expect("read package-lock.json");
    // install-deps.sh copies the lock file next to the modules it installed from it.
    if std::fs::read(installed.join("package-lock.json"))
        .ok()
        .as_deref()
        != Some(&lock[..])
        || !installed.join("node_modules/mysql2").is_dir()
    {
        skip_missing(&format!(
            "mysql2 from tests/node/package-lock.json (in {})",
            installed.display()
        ));
        return;
    }
    let server = Server::start();
    let mut cmd = Command::new(node);
    cmd.arg("--test")
        .arg(format!("{TESTS}/mysql2.test.js"))
        .env("NODE_PATH", installed.join("node_modules"))
        .env("CANYON_HOST", "127.0.0.1")
        .env("CANYON_PORT", server.port().to_string())
        .env("CANYON_USER", "root")
        .env("CANYON_PASSWORD", server.password());
    let out = run_bounded(&mut cmd, "", CLIENT_TIMEOUT);
    assert!(
        out.status.success(),
        "node --test failed ({}):\n{}\n{}\n{}",
        out.status,
        out.stdout,
        out.stderr,
        server.log_tail()
    );
    eprintln!("{}", out.stdout);
}
