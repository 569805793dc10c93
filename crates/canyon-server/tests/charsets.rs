//! Character sets over the wire (issue 29): the real `mariadb` client with
//! `--default-character-set=latin1` / `cp1251` (the handshake's collation id)
//! and `SET NAMES` sends statement text in that set and reads results in it;
//! Canyon converts both ways and stores UTF-8. Each script runs against
//! MariaDB 10.11 too when it is installed, and the bytes the client prints
//! must be the same. COM_STMT_EXECUTE's string parameters are converted
//! from `character_set_client` as well (the test's own client).

mod common;

use common::{find_program, skip_without, Mariadb, Server, ServerOptions};
use std::io::Write;
use std::process::{Command, Stdio};

/// The `mariadb` client in batch mode against 127.0.0.1:`port`, `input` (raw
/// bytes, in whatever character set `extra` names) on its standard input:
/// (stdout bytes, stderr).
fn cli(port: u16, password: &str, extra: &[&str], input: &[u8]) -> (Vec<u8>, String) {
    let mut child = Command::new(find_program("mariadb").expect("the mariadb client is installed"))
        .arg("--no-defaults")
        .arg("--protocol=TCP")
        .arg("-h127.0.0.1")
        .arg(format!("-P{port}"))
        .arg("-uroot")
        .arg(format!("-p{password}"))
        .args(["--batch", "--raw", "-A", "--force", "--connect-timeout=30"])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mariadb");
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(input)
        .expect("write the script");
    let out = child.wait_with_output().expect("mariadb finishes");
    (
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const SCHEMA: &[u8] = b"CREATE DATABASE cs;\n\
    CREATE TABLE cs.t (id INT PRIMARY KEY, l VARCHAR(20) CHARACTER SET latin1, \
    c VARCHAR(20) CHARACTER SET cp1251, u VARCHAR(20) CHARACTER SET utf8mb4, b VARBINARY(10));\n";

/// latin1 bytes: 'café €' (0x80 is cp1252's euro), a `_binary` literal whose
/// bytes must stay bytes.
const LATIN1: &[u8] =
    b"INSERT INTO cs.t VALUES (1, 'caf\xE9 \x80', NULL, 'caf\xE9', _binary'\xE9\xFF');\n\
    SELECT l, u, b FROM cs.t WHERE id = 1;\n";

/// cp1251 bytes: '\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82' in UTF-8.
const CP1251: &[u8] = b"INSERT INTO cs.t VALUES (2, NULL, '\xCF\xF0\xE8\xE2\xE5\xF2', '\xCF\xF0\xE8\xE2\xE5\xF2', NULL);\n\
    SELECT c, u FROM cs.t WHERE id = 2;\n";

/// What is stored, read as UTF-8 by a utf8mb4 session.
const STORED: &[u8] = b"SELECT id, HEX(CONVERT(l USING utf8mb4)), HEX(CONVERT(c USING utf8mb4)), HEX(u), HEX(b) FROM cs.t ORDER BY id;\n";

/// SET NAMES in a utf8mb4 connection: results in cp1251, then in latin1,
/// which lacks Cyrillic ('?' for each letter).
const SET_NAMES: &[u8] = b"SET NAMES cp1251;\nSELECT c FROM cs.t WHERE id = 2;\n\
    SET NAMES latin1;\nSELECT c, l FROM cs.t ORDER BY id;\n\
    SET NAMES 'klingon';\n";

/// A character the column's set lacks, in strict mode: 1366.
const STRICT: &[u8] =
    b"INSERT INTO cs.t (id, l) VALUES (3, '\xD0\xB6');\nSELECT COUNT(*) FROM cs.t;\n";

struct Outputs {
    latin1: (Vec<u8>, String),
    cp1251: (Vec<u8>, String),
    stored: (Vec<u8>, String),
    set_names: (Vec<u8>, String),
    strict: (Vec<u8>, String),
}

fn run_scripts(port: u16, password: &str) -> Outputs {
    let (_, err) = cli(port, password, &[], SCHEMA);
    assert!(err.is_empty(), "schema: {err}");
    Outputs {
        latin1: cli(port, password, &["--default-character-set=latin1"], LATIN1),
        cp1251: cli(port, password, &["--default-character-set=cp1251"], CP1251),
        stored: cli(port, password, &["--default-character-set=utf8mb4"], STORED),
        set_names: cli(
            port,
            password,
            &["--default-character-set=utf8mb4"],
            SET_NAMES,
        ),
        strict: cli(port, password, &["--default-character-set=utf8mb4"], STRICT),
    }
}

#[test]
fn latin1_and_cp1251_clients_round_trip() {
    if skip_without("mariadb") {
        return;
    }
    let server = Server::start_with(ServerOptions {
        in_memory: true,
        ..ServerOptions::default()
    });
    let got = run_scripts(server.port(), server.password());

    assert_eq!(got.latin1.1, "", "latin1 script errors");
    assert_eq!(
        got.latin1.0,
        b"l\tu\tb\ncaf\xE9 \x80\tcaf\xE9\t\xE9\xFF\n".to_vec(),
        "latin1 client's bytes back: {}",
        String::from_utf8_lossy(&got.latin1.0)
    );
    assert_eq!(got.cp1251.1, "", "cp1251 script errors");
    assert_eq!(
        got.cp1251.0,
        b"c\tu\n\xCF\xF0\xE8\xE2\xE5\xF2\t\xCF\xF0\xE8\xE2\xE5\xF2\n".to_vec(),
        "cp1251 client's bytes back: {}",
        String::from_utf8_lossy(&got.cp1251.0)
    );
    assert_eq!(
        String::from_utf8_lossy(&got.stored.0),
        "id\tHEX(CONVERT(l USING utf8mb4))\tHEX(CONVERT(c USING utf8mb4))\tHEX(u)\tHEX(b)\n\
         1\t636166C3A920E282AC\tNULL\t636166C3A9\tE9FF\n\
         2\tNULL\tD09FD180D0B8D0B2D0B5D182\tD09FD180D0B8D0B2D0B5D182\tNULL\n"
    );
    assert_eq!(
        got.set_names.0,
        b"c\n\xCF\xF0\xE8\xE2\xE5\xF2\nc\tl\nNULL\tcaf\xE9 \x80\n??????\tNULL\n".to_vec(),
        "SET NAMES: {}",
        String::from_utf8_lossy(&got.set_names.0)
    );
    assert!(
        got.set_names
            .1
            .contains("ERROR 1115 (42000) at line 5: Unknown character set: 'klingon'"),
        "{}",
        got.set_names.1
    );
    assert!(
        got.strict
            .1
            .contains("ERROR 1366 (HY000) at line 1: Incorrect string value: '\\xD0\\xB6'"),
        "{}",
        got.strict.1
    );
    assert_eq!(String::from_utf8_lossy(&got.strict.0), "COUNT(*)\n2\n");

    // The same bytes from MariaDB 10.11, where it is installed (its 1366
    // names the column as `cs`.`t`.`l`, so only the code is compared).
    if let Some(maria) = Mariadb::start() {
        let want = run_scripts(maria.port(), maria.password());
        assert_eq!(got.latin1.0, want.latin1.0, "latin1 against MariaDB");
        assert_eq!(got.cp1251.0, want.cp1251.0, "cp1251 against MariaDB");
        assert_eq!(got.stored.0, want.stored.0, "stored UTF-8 against MariaDB");
        assert_eq!(
            got.set_names.0, want.set_names.0,
            "SET NAMES against MariaDB"
        );
        assert!(want.strict.1.contains("ERROR 1366"), "{}", want.strict.1);
        assert_eq!(got.strict.0, want.strict.0);
    }
}

#[test]
fn prepared_string_parameters_convert_from_the_client_set() {
    let server = Server::start_with(ServerOptions {
        in_memory: true,
        ..ServerOptions::default()
    });
    let mut c = server.client();
    c.exec("CREATE DATABASE p");
    c.exec("CREATE TABLE p.t (id INT PRIMARY KEY, s VARCHAR(10))");
    c.exec("SET NAMES latin1");
    let stmt = c.prepare("INSERT INTO p.t VALUES (?, ?)").expect("prepare");
    // The two bytes C3 A9 are 'Ã©' in latin1.
    c.execute(
        stmt.id,
        &[
            common::client::Param::Int(1),
            common::client::Param::Str("é".into()),
        ],
    )
    .expect("execute");
    c.exec("SET NAMES utf8mb4");
    assert_eq!(
        c.exec("SELECT HEX(s) FROM p.t").scalar().as_deref(),
        Some("C383C2A9")
    );
    // In utf8mb4 the same parameter is 'é'.
    let stmt = c.prepare("INSERT INTO p.t VALUES (?, ?)").expect("prepare");
    c.execute(
        stmt.id,
        &[
            common::client::Param::Int(2),
            common::client::Param::Str("é".into()),
        ],
    )
    .expect("execute");
    assert_eq!(
        c.exec("SELECT HEX(s) FROM p.t WHERE id = 2")
            .scalar()
            .as_deref(),
        Some("C3A9")
    );
}
