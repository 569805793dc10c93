//! Differential test: the same SQL scripts (`tests/sql/differential*.sql`) go
//! through the real `mariadb` CLI to Canyon and to a MariaDB 10.11 started by the
//! test, and the two transcripts are compared statement by statement.
//!
//! The CLI runs with `--batch --raw -A --force -vv`: `--force` goes on after errors,
//! `-vv` echoes each statement between `--------------` lines and prints
//! "Query OK, N rows affected", the INSERT/UPDATE info line, warning counts and
//! "N rows in set" (without timings). Errors go to stderr as
//! `ERROR errno (SQLSTATE) at line L: message`; the test files each one under the
//! statement that starts on line L and keeps only errno and SQLSTATE, because
//! messages legitimately differ between MariaDB and MySQL 8, whose wording Canyon
//! follows.
//!
//! A statement preceded by `-- differs: REASON` in the script is a legitimate
//! difference: for it only the outcome (success, or which error) is compared, and
//! the two outputs are printed with the reason.

mod common;

use common::{mariadb_cli_args, Mariadb, Server};

/// The scripts, compiled in so the test needs no path at run time. Each is
/// self-contained (creates and drops its own database) and compared on its own.
const SCRIPTS: &[(&str, &str)] = &[
    ("differential.sql", include_str!("sql/differential.sql")),
    (
        "differential_query.sql",
        include_str!("sql/differential_query.sql"),
    ),
    (
        "differential_functions.sql",
        include_str!("sql/differential_functions.sql"),
    ),
    (
        "differential_dml.sql",
        include_str!("sql/differential_dml.sql"),
    ),
    (
        "differential_alter.sql",
        include_str!("sql/differential_alter.sql"),
    ),
    (
        "differential_metadata.sql",
        include_str!("sql/differential_metadata.sql"),
    ),
    (
        "differential_collations.sql",
        include_str!("sql/differential_collations.sql"),
    ),
    (
        "differential_setops.sql",
        include_str!("sql/differential_setops.sql"),
    ),
    (
        "differential_foreign_keys.sql",
        include_str!("sql/differential_foreign_keys.sql"),
    ),
    (
        "differential_partitions.sql",
        include_str!("sql/differential_partitions.sql"),
    ),
    (
        "differential_json.sql",
        include_str!("sql/differential_json.sql"),
    ),
    (
        "differential_enum_set.sql",
        include_str!("sql/differential_enum_set.sql"),
    ),
    (
        "differential_generated.sql",
        include_str!("sql/differential_generated.sql"),
    ),
    (
        "differential_time.sql",
        include_str!("sql/differential_time.sql"),
    ),
    (
        "differential_fulltext.sql",
        include_str!("sql/differential_fulltext.sql"),
    ),
    (
        "differential_window.sql",
        include_str!("sql/differential_window.sql"),
    ),
    (
        "differential_multi_dml.sql",
        include_str!("sql/differential_multi_dml.sql"),
    ),
    (
        "differential_decimal65.sql",
        include_str!("sql/differential_decimal65.sql"),
    ),
    (
        "differential_subquery_forms.sql",
        include_str!("sql/differential_subquery_forms.sql"),
    ),
];

/// One statement of the script.
#[derive(Debug)]
struct Stmt {
    /// 1-based line on which the statement starts (what the CLI's errors cite).
    line: usize,
    /// The statement without its final `;`.
    text: String,
    /// The reason given by a `-- differs:` comment before it.
    differs: Option<String>,
    /// `USE db`: run by the CLI itself (COM_INIT_DB) and not echoed by `-vv`.
    client_command: bool,
}

/// Splits the script by the rules in its header: statements end with `;` at the
/// end of a line; `--` comment lines between statements.
fn parse_script(src: &str) -> Vec<Stmt> {
    let mut out = Vec::new();
    let mut differs: Option<String> = None;
    let mut cur: Option<(usize, String)> = None;
    for (i, raw) in src.lines().enumerate() {
        let line = raw.trim();
        if cur.is_none() {
            if line.is_empty() {
                continue;
            }
            if let Some(comment) = line.strip_prefix("--") {
                if let Some(reason) = comment.trim().strip_prefix("differs:") {
                    differs = Some(reason.trim().to_string());
                }
                continue;
            }
            cur = Some((i + 1, String::new()));
        }
        let (start, mut text) = cur.take().expect("a statement is open here");
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(raw);
        if line.ends_with(';') {
            let text = text.trim_end().trim_end_matches(';').trim().to_string();
            let client_command = text
                .split_whitespace()
                .next()
                .is_some_and(|w| w.eq_ignore_ascii_case("use"));
            out.push(Stmt {
                line: start,
                text,
                differs: differs.take(),
                client_command,
            });
        } else {
            cur = Some((start, text));
        }
    }
    assert!(cur.is_none(), "the script ends inside a statement");
    out
}

fn normalize(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What the CLI printed for each statement, plus anything it printed that belongs
/// to no statement.
#[derive(Debug)]
struct Transcript {
    per_stmt: Vec<Vec<String>>,
    stray: Vec<String>,
}

/// Files the CLI's output under the statements of `stmts`.
fn transcript(stmts: &[Stmt], stdout: &str, stderr: &str) -> Transcript {
    const RULE: &str = "--------------";
    let mut per_stmt: Vec<Vec<String>> = stmts.iter().map(|_| Vec::new()).collect();
    let mut stray = Vec::new();

    // stdout: RULE, echoed statement, RULE, output ... up to the next RULE.
    let lines: Vec<&str> = stdout.lines().collect();
    let mut blocks: Vec<(String, Vec<String>)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i] != RULE {
            stray.push(format!("stdout: {}", lines[i]));
            i += 1;
            continue;
        }
        i += 1;
        let mut echo = Vec::new();
        while i < lines.len() && lines[i] != RULE {
            echo.push(lines[i]);
            i += 1;
        }
        i += 1; // closing rule
        let mut output = Vec::new();
        while i < lines.len() && lines[i] != RULE {
            output.push(lines[i].to_string());
            i += 1;
        }
        if i == lines.len() && output.last().map(String::as_str) == Some("Bye") {
            output.pop();
        }
        while output.first().is_some_and(|l| l.is_empty()) {
            output.remove(0);
        }
        while output.last().is_some_and(|l| l.is_empty()) {
            output.pop();
        }
        blocks.push((echo.join("\n"), output));
    }

    // Pair echo blocks with the statements the CLI sends, in order.
    let mut next = 0;
    for (echo, output) in blocks {
        let want = normalize(&echo);
        let found = (next..stmts.len())
            .find(|&k| !stmts[k].client_command && normalize(&stmts[k].text) == want);
        match found {
            Some(k) => {
                per_stmt[k] = output;
                next = k + 1;
            }
            None => stray.push(format!("unmatched echo: {echo}")),
        }
    }

    // stderr: "ERROR 1146 (42S02) at line 12: message".
    for line in stderr.lines() {
        let parsed = line.strip_prefix("ERROR ").and_then(|rest| {
            let (code, rest) = rest.split_once(" at line ")?;
            let (num, _msg) = rest.split_once(':')?;
            Some((code.trim().to_string(), num.trim().parse::<usize>().ok()?))
        });
        match parsed.and_then(|(code, n)| stmts.iter().position(|s| s.line == n).map(|k| (code, k)))
        {
            Some((code, k)) => per_stmt[k].push(format!("ERROR {code}")),
            None => stray.push(format!("stderr: {line}")),
        }
    }
    Transcript { per_stmt, stray }
}

/// Runs the script through the CLI against a server.
fn run_script(port: u16, password: &str, script: &str, stmts: &[Stmt]) -> Transcript {
    let out = mariadb_cli_args(port, password, None, script, &["--force", "-vv"]);
    transcript(stmts, &out.stdout, &out.stderr)
}

/// The ERROR lines of a statement's transcript: its outcome.
fn outcome(lines: &[String]) -> Vec<&String> {
    lines.iter().filter(|l| l.starts_with("ERROR ")).collect()
}

/// Compares two transcripts; returns a report of every difference (empty when
/// they agree). `expected` is MariaDB's.
fn compare(stmts: &[Stmt], expected: &Transcript, got: &Transcript) -> String {
    let mut report = String::new();
    let mut differing = 0;
    for (k, s) in stmts.iter().enumerate() {
        let (e, g) = (&expected.per_stmt[k], &got.per_stmt[k]);
        let show = |lines: &[String]| {
            if lines.is_empty() {
                "    (nothing)\n".to_string()
            } else {
                lines.iter().map(|l| format!("    {l}\n")).collect()
            }
        };
        match &s.differs {
            Some(reason) => {
                if outcome(e) != outcome(g) {
                    differing += 1;
                    report.push_str(&format!(
                        "line {}: {}\n  (marked as differing: {reason}; outcomes must still agree)\n  MariaDB:\n{}  Canyon:\n{}\n",
                        s.line, s.text, show(e), show(g)
                    ));
                } else if e != g {
                    eprintln!(
                        "line {}: {}\n  differs as expected: {reason}\n  MariaDB:\n{}  Canyon:\n{}",
                        s.line,
                        s.text,
                        show(e),
                        show(g)
                    );
                }
            }
            None => {
                if e != g {
                    differing += 1;
                    report.push_str(&format!(
                        "line {}: {}\n  MariaDB (expected):\n{}  Canyon (got):\n{}\n",
                        s.line,
                        s.text,
                        show(e),
                        show(g)
                    ));
                }
            }
        }
    }
    if expected.stray != got.stray {
        report.push_str(&format!(
            "output belonging to no statement differs:\n  MariaDB: {:?}\n  Canyon: {:?}\n",
            expected.stray, got.stray
        ));
    }
    if !report.is_empty() {
        report = format!(
            "{differing} of {} statements differ from MariaDB:\n\n{report}",
            stmts.len()
        );
    }
    report
}

/// The script and the transcript parser, checked on MariaDB alone: every statement
/// the CLI sends is echoed and matched, nothing is left over, and two runs give
/// the same transcript (the script is deterministic).
#[test]
fn script_is_deterministic_on_mariadb() {
    let Some(db) = Mariadb::start() else { return };
    let main = parse_script(SCRIPTS[0].1);
    assert!(main.len() > 150, "parsed only {} statements", main.len());
    for (name, script) in SCRIPTS {
        let stmts = parse_script(script);
        // InnoDB's FULLTEXT relevance depends on its document count, which
        // for a table re-created right after a DROP DATABASE depends on when
        // InnoDB's background FTS thread synced the dropped index (one run in
        // three on this machine counted 8 documents instead of 9; a server
        // that ran the other scripts first gave yet other numbers under
        // load). A fresh server gives the fresh-server numbers, so both runs
        // of that script get one of their own.
        let fresh;
        let (first, second) = if *name == VARIES_ON_MARIADB {
            let (Some(one), Some(two)) = (Mariadb::start(), Mariadb::start()) else {
                return;
            };
            fresh = [one, two];
            (&fresh[0], &fresh[1])
        } else {
            (&db, &db)
        };
        check_deterministic(first, second, name, script, &stmts);
    }
}

fn check_deterministic(
    db: &Mariadb,
    second_db: &Mariadb,
    name: &str,
    script: &str,
    stmts: &[Stmt],
) {
    let first = run_script(db.port(), db.password(), script, stmts);
    assert!(first.stray.is_empty(), "stray output: {:?}", first.stray);
    for (k, s) in stmts.iter().enumerate() {
        if !s.client_command {
            // -vv prints "Query OK", rows or an error for every statement.
            assert!(
                !first.per_stmt[k].is_empty(),
                "{name}: no output for line {}: {}",
                s.line,
                s.text
            );
        }
        assert!(
            !first.per_stmt[k].iter().any(|l| l.starts_with("ERROR 20")),
            "{name}: client error on MariaDB at line {}: {:?}",
            s.line,
            first.per_stmt[k]
        );
    }
    let second = run_script(second_db.port(), second_db.password(), script, stmts);
    let mut report = compare(stmts, &first, &second);
    if !report.is_empty() && name == VARIES_ON_MARIADB && fresh_mariadb_gives(script, stmts, &first)
    {
        report.clear();
    }
    assert!(
        report.is_empty(),
        "{name}: MariaDB against itself:\n{report}"
    );
}

/// The script whose answers differ between fresh MariaDB servers: InnoDB's
/// FULLTEXT relevance uses its document count, which for the 8 rows just
/// inserted is 8 or (now and then, by the timing of InnoDB's background FTS
/// sync) 9 — seen both in CI and here. Canyon counts the rows its statement
/// sees (8). For this script an answer passes when some fresh MariaDB gives
/// it too.
const VARIES_ON_MARIADB: &str = "differential_fulltext.sql";

/// Whether one of up to 4 fresh MariaDB servers prints `want` for `script`.
fn fresh_mariadb_gives(script: &str, stmts: &[Stmt], want: &Transcript) -> bool {
    (0..4).any(|_| {
        let Some(db) = Mariadb::start() else {
            return false;
        };
        let t = run_script(db.port(), db.password(), script, stmts);
        compare(stmts, &t, want).is_empty()
    })
}

/// The differential test proper: Canyon must print what MariaDB prints.
#[test]
fn canyon_matches_mariadb() {
    let Some(db) = Mariadb::start() else { return };
    let scripts: Vec<(&str, &str, Vec<Stmt>)> = SCRIPTS
        .iter()
        .map(|(name, script)| (*name, *script, parse_script(script)))
        .collect();
    let expected: Vec<Transcript> = scripts
        .iter()
        .map(|(_, script, stmts)| run_script(db.port(), db.password(), script, stmts))
        .collect();
    drop(db);

    let mut server = Server::start();
    let mut reports = String::new();
    for ((name, script, stmts), expected) in scripts.iter().zip(&expected) {
        let got = run_script(server.port(), server.password(), script, stmts);
        let mut report = compare(stmts, expected, &got);
        if !report.is_empty()
            && *name == VARIES_ON_MARIADB
            && fresh_mariadb_gives(script, stmts, &got)
        {
            report.clear();
        }
        if !report.is_empty() {
            reports.push_str(&format!("==== {name}\n{report}\n"));
        }
    }
    server.assert_running();
    assert!(reports.is_empty(), "{reports}");
}
