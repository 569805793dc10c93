//! The Unix-domain socket listener, driven by the real `mariadb` CLI.

mod common;

use common::{find_program, skip_without, Server, ServerOptions};
use std::process::Command;

#[test]
fn mariadb_cli_connects_over_the_unix_socket() {
    if skip_without("mariadb") {
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let socket = dir.path().join("canyon.sock");
    // A stale file from a killed server must not stop the next start.
    let stale = std::os::unix::net::UnixListener::bind(&socket).expect("a stale socket file");
    drop(stale);
    let server = Server::start_with(ServerOptions {
        in_memory: true,
        extra_toml: format!("socket = {:?}\n", socket.display().to_string()),
        ..ServerOptions::default()
    });
    let out = Command::new(find_program("mariadb").expect("checked above"))
        .arg(format!("--socket={}", socket.display()))
        .args([
            "-uroot",
            &format!("-p{}", server.password()),
            "--batch",
            "--raw",
            "-A",
        ])
        .args(["-e", "SELECT CURRENT_USER(), 6 * 7"])
        .output()
        .expect("run the mariadb CLI");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "mariadb over the socket failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let row = stdout.lines().nth(1).unwrap_or_default();
    assert_eq!(row, "root@%\t42", "got {stdout:?}");
}
