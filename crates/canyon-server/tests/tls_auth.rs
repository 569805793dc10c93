//! TLS, caching_sha2_password, require_secure_transport and COM_CHANGE_USER.
//!
//! Certificates come from the real `openssl` CLI; the clients are real:
//! PyMySQL, mysql-connector-python and the mariadb CLI (tests/auth/*.py, run
//! with pytest), and the byte-level test client for COM_CHANGE_USER details.

mod common;

use common::client::{Client, Connect};
use common::CLIENT_TIMEOUT;
use common::{find_program, in_ci, run_bounded, skip_without, Server, ServerOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A self-signed certificate for 127.0.0.1/localhost, its key, and a second
/// certificate that did not sign it (a wrong CA for clients to try).
struct Certs {
    dir: tempfile::TempDir,
}

impl Certs {
    fn new() -> Certs {
        let dir = tempfile::tempdir().expect("a temporary directory");
        for name in ["server", "other"] {
            let out = Command::new("openssl")
                .args([
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                ])
                .args(["-subj", &format!("/CN=canyon-test-{name}")])
                .args(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
                .arg("-keyout")
                .arg(dir.path().join(format!("{name}-key.pem")))
                .arg("-out")
                .arg(dir.path().join(format!("{name}-cert.pem")))
                .output()
                .expect("run openssl");
            assert!(
                out.status.success(),
                "openssl req failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Certs { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn socket(&self) -> PathBuf {
        self.path("canyon.sock")
    }

    /// Config lines: the certificate, the key and a Unix socket.
    fn toml(&self) -> String {
        format!(
            "tls_cert = {:?}\ntls_key = {:?}\nsocket = {:?}\n",
            self.path("server-cert.pem").display().to_string(),
            self.path("server-key.pem").display().to_string(),
            self.socket().display().to_string(),
        )
    }
}

/// Skips (returns `true`) without openssl, python3 + pytest + the drivers, or
/// the mariadb CLI; under CI that fails instead.
fn skip_without_tools() -> bool {
    if skip_without("openssl") || skip_without("mariadb") || skip_without("python3") {
        return true;
    }
    let ok = Command::new("python3")
        .args(["-c", "import pytest, pymysql, mysql.connector"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        let msg = "pytest, PyMySQL or mysql-connector-python is not installed: run \
                   scripts/install-deps.sh. SKIPPING this test.";
        assert!(!in_ci(), "{msg} (not allowed under CI)");
        eprintln!("\n!!!!!!!! {msg} !!!!!!!!\n");
        return true;
    }
    false
}

#[test]
fn tls_and_caching_sha2_password_with_real_clients() {
    if skip_without_tools() {
        return;
    }
    let certs = Certs::new();
    let server = Server::start_with(ServerOptions {
        in_memory: true,
        extra_toml: certs.toml(),
        ..ServerOptions::default()
    });
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/auth");
    let mut cmd = Command::new(find_program("python3").expect("checked above"));
    cmd.args(["-m", "pytest", "-q", "-p", "no:cacheprovider", dir])
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PATH", path_with_mariadb())
        .env("CANYON_HOST", "127.0.0.1")
        .env("CANYON_PORT", server.port().to_string())
        .env("CANYON_USER", "root")
        .env("CANYON_PASSWORD", server.password())
        .env("CANYON_SOCKET", certs.socket())
        .env("CANYON_TLS_CA", certs.path("server-cert.pem"))
        .env("CANYON_OTHER_CA", certs.path("other-cert.pem"));
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

/// PATH with the directory of the mariadb CLI added (the Python tests call it).
fn path_with_mariadb() -> String {
    let cli = find_program("mariadb").expect("checked by skip_without_tools");
    let dir = cli.parent().unwrap_or(Path::new("/usr/bin"));
    format!(
        "{}:{}",
        std::env::var("PATH").unwrap_or_default(),
        dir.display()
    )
}

#[test]
fn require_secure_transport_refuses_plain_tcp_only() {
    if skip_without("openssl") || skip_without("mariadb") {
        return;
    }
    let certs = Certs::new();
    let server = Server::start_with(ServerOptions {
        in_memory: true,
        extra_toml: format!("{}require_secure_transport = true\n", certs.toml()),
        ..ServerOptions::default()
    });
    let err = Client::connect(server.port(), "root", server.password())
        .err()
        .expect("plain TCP must be refused");
    assert_eq!(
        (err.errno, err.sqlstate.as_str()),
        (3159, "HY000"),
        "{err:?}"
    );

    let cli = find_program("mariadb").expect("checked above");
    let over = |args: &[&str]| {
        let mut cmd = Command::new(&cli);
        cmd.args(args)
            .args(["-uroot", &format!("-p{}", server.password())])
            .args(["--batch", "--skip-column-names", "-e", "SELECT 6 * 7"]);
        run_bounded(&mut cmd, "", CLIENT_TIMEOUT)
    };
    let port = server.port().to_string();
    let tls = over(&["-h127.0.0.1", "-P", &port, "--ssl"]);
    assert!(tls.status.success(), "TLS refused: {}", tls.stderr);
    assert_eq!(tls.stdout.trim(), "42");
    let socket = format!("--socket={}", certs.socket().display());
    let local = over(&[&socket]);
    assert!(local.status.success(), "socket refused: {}", local.stderr);
    assert_eq!(local.stdout.trim(), "42");
    let plain = over(&["-h127.0.0.1", "-P", &port, "--skip-ssl"]);
    assert!(!plain.status.success());
    assert!(plain.stderr.contains("3159"), "{}", plain.stderr);
}

#[test]
fn change_user_starts_a_fresh_session_or_keeps_the_old_one() {
    let server = Server::start_with(ServerOptions {
        in_memory: true,
        ..ServerOptions::default()
    });
    let mut c = Client::connect_with(&Connect::new(server.port(), "root", server.password()))
        .expect("connect");
    for sql in [
        "CREATE USER 'u2'@'%' IDENTIFIED BY 'p2'",
        "GRANT ALL ON *.* TO 'u2'@'%'",
        "CREATE DATABASE d",
        "CREATE TABLE d.t (a INT PRIMARY KEY)",
        "SET @v = 5",
        "BEGIN",
        "INSERT INTO d.t VALUES (1)",
    ] {
        c.exec(sql);
    }
    c.change_user("u2", "p2", "d").expect("change to u2");
    let row = c
        .query("SELECT CURRENT_USER(), DATABASE(), @v, (SELECT COUNT(*) FROM t)")
        .expect("query")
        .rows();
    // New user and database; variables gone; the open transaction rolled back.
    assert_eq!(
        row,
        vec![vec![
            Some("u2@%".to_string()),
            Some("d".to_string()),
            None,
            Some("0".to_string())
        ]]
    );

    // A wrong password: ERR 1045, and the session stays as it was.
    c.exec("SET @w = 7");
    let err = c.change_user("root", "wrong", "").expect_err("refused");
    assert_eq!((err.errno, err.sqlstate.as_str()), (1045, "28000"));
    let err = c.change_user("nobody", "p2", "").expect_err("refused");
    assert_eq!(err.errno, 1045);
    let err = c
        .change_user("u2", "p2", "no_such_db")
        .expect_err("refused");
    assert_eq!(err.errno, 1049);
    let row = c
        .query("SELECT CURRENT_USER(), DATABASE(), @w")
        .expect("query")
        .rows();
    assert_eq!(
        row,
        vec![vec![
            Some("u2@%".to_string()),
            Some("d".to_string()),
            Some("7".to_string())
        ]]
    );

    c.change_user("root", server.password(), "")
        .expect("back to root");
    let row = c
        .query("SELECT CURRENT_USER(), DATABASE()")
        .expect("query")
        .rows();
    assert_eq!(row, vec![vec![Some("root@%".to_string()), None]]);
}
