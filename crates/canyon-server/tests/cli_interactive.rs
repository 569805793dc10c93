//! The mariadb CLI used interactively through a pseudo-terminal
//! (`tests/cli/interactive.py`, Python's `pty`): what a person at the prompt
//! sees — the banner, prompts, `use` with completion loading, boxed result
//! tables, `\s` status, errors and multi-line input.

mod common;

use common::{find_program, run_bounded, skip_without, Server, ServerOptions, CLIENT_TIMEOUT};
use std::process::Command;

#[test]
fn mariadb_cli_interactive_session() {
    if skip_without("mariadb") || skip_without("python3") {
        return;
    }
    let server = Server::start_with(ServerOptions {
        in_memory: true,
        ..ServerOptions::default()
    });
    let cli = find_program("mariadb").expect("checked above");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cli/interactive.py");
    let mut cmd = Command::new(find_program("python3").expect("checked above"));
    cmd.arg(script)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("CANYON_PORT", server.port().to_string())
        .env("CANYON_PASSWORD", server.password())
        .env("MARIADB_CLI", cli);
    let out = run_bounded(&mut cmd, "", CLIENT_TIMEOUT);
    assert!(
        out.status.success(),
        "interactive session failed ({}):\n{}\n{}\n{}",
        out.status,
        out.stdout,
        out.stderr,
        server.log_tail()
    );
    assert!(
        out.stdout.contains("interactive session ok"),
        "{}",
        out.stdout
    );
}
