//! MariaDB's own mysql-test files (Debian's `mariadb-test` package) against
//! Canyon: every file listed in `tests/mariadb_suite/*.pass` must keep
//! passing, in text and with `--ps-protocol`.
//!
//! The files are run by `scripts/mariadb-suite.sh` (one `mariadb-test` per
//! file, against a fresh `test` database) on a server configured as
//! mysql-test-run's `include/default_mysqld.cnf` configures MariaDB for the
//! expected results: `character_set_server = "latin1"`, and LOAD DATA LOCAL
//! allowed (`local_infile = true`; MySQL 8's default is off). The results were
//! written by MariaDB, so the server also runs with `presentation =
//! "mariadb"`: SHOW CREATE TABLE in MariaDB's words where MySQL 8 prints the
//! same definition differently (integer display widths, unquoted number
//! defaults, the partition clause). Which files pass, which fail
//! and why is in docs/compatibility.md ("MariaDB's test files");
//! `scripts/mariadb-suite.sh --list issue29` lists the whole set.

mod common;

use common::{skip_without, Server, ServerOptions};
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The server configuration the expected results assume.
fn suite_server() -> Server {
    suite_server_in(None)
}

/// [`suite_server`], its system time zone `tz` where given (the iuds suite
/// runs its server with `--timezone=GMT-3`; `Etc/GMT-3` is that zone's name
/// in the tz database: three hours east of UTC).
fn suite_server_in(tz: Option<&str>) -> Server {
    Server::start_with(ServerOptions {
        env: tz
            .map(|z| vec![("TZ".to_string(), z.to_string())])
            .unwrap_or_default(),
        in_memory: true,
        // mysql-test-run's default_mysqld.cnf has `local-infile` on too (the
        // ld_*_local files load with LOAD DATA LOCAL).
        extra_toml:
            "character_set_server = \"latin1\"\npresentation = \"mariadb\"\nlocal_infile = true\n"
                .into(),
        ..Default::default()
    })
}

/// Runs the files of `list` (names, one per line) and returns the verdict
/// lines that are not `pass`, with the start of each failure's output.
fn run_list(server: &Server, list: &str) -> Vec<String> {
    let names = std::fs::read_to_string(
        root()
            .join("crates/canyon-server/tests/mariadb_suite")
            .join(list),
    )
    .expect("read the list of passing files");
    let out = tempfile::tempdir().expect("a directory for mariadb-test's output");
    let files: String = names
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|n| {
            // A bare name is a funcs file; other suites' files are named
            // with their path (`suite/engines/iuds/t/NAME`).
            if n.contains('/') {
                format!("{n}\n")
            } else {
                format!("suite/engines/funcs/t/{n}\n")
            }
        })
        .collect();
    let list_file = out.path().join("list");
    std::fs::write(&list_file, &files).expect("write the file list");
    let run = Command::new(root().join("scripts/mariadb-suite.sh"))
        .arg(&list_file)
        .arg("127.0.0.1")
        .arg(server.port().to_string())
        .arg("root")
        .arg(server.password())
        .arg(out.path())
        .output()
        .expect("run scripts/mariadb-suite.sh");
    let verdicts = String::from_utf8_lossy(&run.stdout).into_owned();
    assert_eq!(
        verdicts.lines().count(),
        files.lines().count() * 2,
        "one verdict per file and mode; the script said:\n{verdicts}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    verdicts
        .lines()
        .filter(|l| !l.ends_with(" pass"))
        .map(|l| {
            let mut parts = l.split(' ');
            let (name, mode) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            let detail = std::fs::read_to_string(out.path().join(format!("{name}.{mode}.out")))
                .unwrap_or_default();
            let head: Vec<&str> = detail.lines().take(25).collect();
            format!("{l}\n{}", head.join("\n"))
        })
        .collect()
}

#[test]
fn issue29_schema_files_keep_passing() {
    if skip_without("mariadb-test") || skip_without("mariadb") {
        return;
    }
    let server = suite_server();
    let failures = run_list(&server, "issue29.pass");
    assert!(
        failures.is_empty(),
        "{} MariaDB test file run(s) that passed before fail now:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn issue30_statement_files_keep_passing() {
    if skip_without("mariadb-test") || skip_without("mariadb") {
        return;
    }
    let server = suite_server_in(Some("Etc/GMT-3"));
    let failures = run_list(&server, "issue30.pass");
    assert!(
        failures.is_empty(),
        "{} MariaDB test file run(s) that passed before fail now:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
