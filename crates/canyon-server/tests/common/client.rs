//! A minimal, synchronous MySQL client written for these tests only.
//!
//! It speaks just enough of the client/server protocol to drive a server and to
//! misbehave on purpose: the v10 handshake, `HandshakeResponse41` with
//! `mysql_native_password` (including an `AuthSwitchRequest`), COM_QUERY with text
//! result sets, COM_PING, COM_STMT_PREPARE / COM_STMT_EXECUTE with binary result
//! sets, and raw packets for the bad-input tests. It is validated against MariaDB
//! by `client_against_mariadb` in `bad_input.rs`.
//!
//! It is not a driver: no TLS, no compression, no character-set handling (values
//! come back as lossy UTF-8), no LOCAL INFILE, and errors of the connection itself
//! are reported as the client-side errors real clients use (2013 "Lost connection
//! to server during query"), so a test can treat them like any other error.

use sha1::{Digest, Sha1};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

/// Capability flags (`CLIENT_*`) the client uses; see the protocol's
/// "Capabilities Flags" page.
pub mod caps {
    /// CLIENT_LONG_PASSWORD (also tells MariaDB the client is a MySQL-style client).
    pub const LONG_PASSWORD: u32 = 1;
    /// CLIENT_LONG_FLAG.
    pub const LONG_FLAG: u32 = 4;
    /// CLIENT_CONNECT_WITH_DB: a database name follows the auth data.
    pub const CONNECT_WITH_DB: u32 = 8;
    /// CLIENT_PROTOCOL_41.
    pub const PROTOCOL_41: u32 = 0x200;
    /// CLIENT_TRANSACTIONS.
    pub const TRANSACTIONS: u32 = 0x2000;
    /// CLIENT_SECURE_CONNECTION: 1-byte length before the auth response.
    pub const SECURE_CONNECTION: u32 = 0x8000;
    /// CLIENT_MULTI_STATEMENTS.
    pub const MULTI_STATEMENTS: u32 = 0x1_0000;
    /// CLIENT_MULTI_RESULTS.
    pub const MULTI_RESULTS: u32 = 0x2_0000;
    /// CLIENT_PS_MULTI_RESULTS.
    pub const PS_MULTI_RESULTS: u32 = 0x4_0000;
    /// CLIENT_PLUGIN_AUTH.
    pub const PLUGIN_AUTH: u32 = 0x8_0000;
    /// CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA.
    pub const PLUGIN_AUTH_LENENC: u32 = 0x20_0000;
    /// CLIENT_DEPRECATE_EOF: result sets end with an OK packet, not EOF.
    pub const DEPRECATE_EOF: u32 = 0x100_0000;
}

/// Command bytes (`COM_*`).
pub mod com {
    /// COM_QUIT.
    pub const QUIT: u8 = 0x01;
    /// COM_INIT_DB.
    pub const INIT_DB: u8 = 0x02;
    /// COM_QUERY.
    pub const QUERY: u8 = 0x03;
    /// COM_PING.
    pub const PING: u8 = 0x0e;
    /// COM_STMT_PREPARE.
    pub const STMT_PREPARE: u8 = 0x16;
    /// COM_STMT_EXECUTE.
    pub const STMT_EXECUTE: u8 = 0x17;
    /// COM_STMT_CLOSE.
    pub const STMT_CLOSE: u8 = 0x19;
}

/// SERVER_MORE_RESULTS_EXISTS in an OK/EOF packet's status flags.
const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;

/// The largest payload of one physical packet; longer payloads continue.
const MAX_PAYLOAD: usize = 0xff_ffff;

/// An error as the server (or, for 2xxx numbers, the client) reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlError {
    /// MySQL error number, e.g. 1064.
    pub errno: u16,
    /// Five-character SQLSTATE, e.g. "42000".
    pub sqlstate: String,
    /// The message text.
    pub message: String,
}

impl SqlError {
    /// CR_SERVER_LOST (2013): the connection broke during a command.
    pub fn lost(e: &io::Error) -> SqlError {
        SqlError {
            errno: 2013,
            sqlstate: "HY000".into(),
            message: format!("Lost connection to server during query ({e})"),
        }
    }

    /// CR_MALFORMED_PACKET (2027): the server sent something this client cannot read.
    pub fn malformed(what: &str) -> SqlError {
        SqlError {
            errno: 2027,
            sqlstate: "HY000".into(),
            message: format!("Malformed packet: {what}"),
        }
    }

    /// Whether this error is the client's own report of a broken connection.
    pub fn is_connection_error(&self) -> bool {
        (2000..3000).contains(&self.errno)
    }
}

impl std::fmt::Display for SqlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ERROR {} ({}): {}",
            self.errno, self.sqlstate, self.message
        )
    }
}

/// What one statement returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryOutcome {
    /// An OK packet.
    Ok {
        /// Rows changed, inserted or deleted.
        affected_rows: u64,
        /// The AUTO_INCREMENT value generated, or 0.
        last_insert_id: u64,
    },
    /// A result set; each value as the text protocol sends it, `None` for NULL.
    /// Binary-protocol rows are converted to the same text form.
    Rows(Vec<Vec<Option<String>>>),
}

impl QueryOutcome {
    /// The rows of a result set; panics (naming the outcome) on an OK.
    pub fn rows(self) -> Vec<Vec<Option<String>>> {
        match self {
            QueryOutcome::Rows(r) => r,
            other => panic!("expected a result set, got {other:?}"),
        }
    }

    /// The first column of the first row, for one-value queries such as COUNT(*).
    pub fn scalar(self) -> Option<String> {
        let rows = self.rows();
        assert!(
            !rows.is_empty(),
            "expected one row, got an empty result set"
        );
        rows[0][0].clone()
    }
}

/// What a COM_STMT_PREPARE returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// The statement id to execute.
    pub id: u32,
    /// Number of `?` parameters.
    pub params: u16,
    /// Number of result-set columns.
    pub columns: u16,
}

/// A parameter value for [`Client::execute`].
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    /// SQL NULL.
    Null,
    /// Sent as MYSQL_TYPE_LONGLONG.
    Int(i64),
    /// Sent as MYSQL_TYPE_VAR_STRING.
    Str(String),
}

/// How to connect.
#[derive(Debug, Clone)]
pub struct Connect {
    /// TCP port on 127.0.0.1.
    pub port: u16,
    /// User name.
    pub user: String,
    /// Password; empty for none.
    pub password: String,
    /// Database to select at connect time.
    pub db: Option<String>,
    /// Ask for CLIENT_DEPRECATE_EOF.
    pub deprecate_eof: bool,
    /// Ask for CLIENT_MULTI_STATEMENTS.
    pub multi_statements: bool,
    /// Socket read/write timeout, so that a hung server fails a test instead of
    /// hanging it.
    pub timeout: Duration,
}

impl Connect {
    /// Root-style defaults: no database, EOF packets, a 60-second socket timeout.
    pub fn new(port: u16, user: &str, password: &str) -> Connect {
        Connect {
            port,
            user: user.into(),
            password: password.into(),
            db: None,
            deprecate_eof: false,
            multi_statements: false,
            timeout: Duration::from_secs(60),
        }
    }
}

/// The server's initial handshake, as far as the tests care.
#[derive(Debug, Clone)]
pub struct Greeting {
    /// e.g. "8.0.36-canyon" or "10.11.6-MariaDB-0+deb12u1".
    pub server_version: String,
    /// The connection id (thread id).
    pub connection_id: u32,
    /// The server's capability flags.
    pub capabilities: u32,
    /// The 20-byte scramble.
    pub scramble: Vec<u8>,
    /// The authentication plugin the server proposes.
    pub auth_plugin: String,
}

/// The `mysql_native_password` response: SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw))).
/// An empty password gives an empty response.
pub fn native_password_scramble(password: &str, scramble: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = Sha1::digest(password.as_bytes());
    let stage2 = Sha1::digest(stage1);
    let mut h = Sha1::new();
    h.update(&scramble[..scramble.len().min(20)]);
    h.update(stage2);
    let mix = h.finalize();
    stage1.iter().zip(mix.iter()).map(|(a, b)| a ^ b).collect()
}

/// Appends a length-encoded integer.
pub fn put_lenenc_int(out: &mut Vec<u8>, v: u64) {
    if v < 251 {
        out.push(v as u8);
    } else if v < 1 << 16 {
        out.push(0xfc);
        out.extend_from_slice(&(v as u16).to_le_bytes());
    } else if v < 1 << 24 {
        out.push(0xfd);
        out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
    } else {
        out.push(0xfe);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Appends a length-encoded string.
pub fn put_lenenc_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_lenenc_int(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// A cursor over one packet's payload.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }
    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], SqlError> {
        if self.remaining() < n {
            return Err(SqlError::malformed("payload too short"));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, SqlError> {
        Ok(self.bytes(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, SqlError> {
        let b = self.bytes(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32, SqlError> {
        let b = self.bytes(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn uint(&mut self, n: usize) -> Result<u64, SqlError> {
        let b = self.bytes(n)?;
        let mut v = 0u64;
        for (i, x) in b.iter().enumerate() {
            v |= u64::from(*x) << (8 * i);
        }
        Ok(v)
    }
    fn null_str(&mut self) -> Result<&'a [u8], SqlError> {
        let rest = &self.buf[self.pos..];
        let end = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| SqlError::malformed("missing NUL"))?;
        self.pos += end + 1;
        Ok(&rest[..end])
    }
    fn rest(&mut self) -> &'a [u8] {
        let s = &self.buf[self.pos..];
        self.pos = self.buf.len();
        s
    }
    /// A length-encoded integer; `None` for the NULL marker 0xfb.
    fn lenenc(&mut self) -> Result<Option<u64>, SqlError> {
        match self.u8()? {
            0xfb => Ok(None),
            0xfc => Ok(Some(self.uint(2)?)),
            0xfd => Ok(Some(self.uint(3)?)),
            0xfe => Ok(Some(self.uint(8)?)),
            0xff => Err(SqlError::malformed("0xff as a length")),
            n => Ok(Some(u64::from(n))),
        }
    }
    fn lenenc_bytes(&mut self) -> Result<Option<&'a [u8]>, SqlError> {
        match self.lenenc()? {
            None => Ok(None),
            Some(n) => Ok(Some(self.bytes(n as usize)?)),
        }
    }
}

/// Parses an ERR packet's payload (0xff already checked by the caller or not).
pub fn parse_err(payload: &[u8]) -> SqlError {
    let mut r = Reader::new(payload);
    let parsed = (|| -> Result<SqlError, SqlError> {
        if r.u8()? != 0xff {
            return Err(SqlError::malformed("not an ERR packet"));
        }
        let errno = r.u16()?;
        let mut sqlstate = String::from("HY000");
        if r.remaining() > 0 && r.buf[r.pos] == b'#' {
            r.pos += 1;
            sqlstate = String::from_utf8_lossy(r.bytes(5)?).into_owned();
        }
        let message = String::from_utf8_lossy(r.rest()).into_owned();
        Ok(SqlError {
            errno,
            sqlstate,
            message,
        })
    })();
    parsed.unwrap_or_else(|e| e)
}

/// OK packet fields the tests use.
struct OkPacket {
    affected_rows: u64,
    last_insert_id: u64,
    status: u16,
}

fn parse_ok(payload: &[u8]) -> Result<OkPacket, SqlError> {
    let mut r = Reader::new(payload);
    r.u8()?; // 0x00 or 0xfe
    let affected_rows = r.lenenc()?.unwrap_or(0);
    let last_insert_id = r.lenenc()?.unwrap_or(0);
    let status = if r.remaining() >= 2 { r.u16()? } else { 0 };
    Ok(OkPacket {
        affected_rows,
        last_insert_id,
        status,
    })
}

/// One column definition, reduced to what decoding binary rows needs.
#[derive(Debug, Clone, Copy)]
struct ColumnInfo {
    column_type: u8,
    flags: u16,
    decimals: u8,
}

fn parse_column(payload: &[u8]) -> Result<ColumnInfo, SqlError> {
    let mut r = Reader::new(payload);
    for _ in 0..6 {
        // catalog, schema, table, org_table, name, org_name
        r.lenenc_bytes()?;
    }
    r.lenenc()?; // length of the fixed fields, 0x0c
    r.u16()?; // charset
    r.u32()?; // column length
    let column_type = r.u8()?;
    let flags = r.u16()?;
    let decimals = r.u8()?;
    Ok(ColumnInfo {
        column_type,
        flags,
        decimals,
    })
}

/// A connection to a MySQL-protocol server. See the module doc for its limits.
pub struct Client {
    stream: TcpStream,
    seq: u8,
    capabilities: u32,
    /// The greeting the server sent.
    pub greeting: Greeting,
    /// The column types (`MYSQL_TYPE_*` bytes) of the last result set read.
    column_types: Vec<u8>,
}

impl Client {
    /// Connects and authenticates as `user` with `password` on 127.0.0.1:`port`.
    pub fn connect(port: u16, user: &str, password: &str) -> Result<Client, SqlError> {
        Client::connect_with(&Connect::new(port, user, password))
    }

    /// Connects with explicit options.
    pub fn connect_with(opts: &Connect) -> Result<Client, SqlError> {
        let mut c = Client::open(opts.port, opts.timeout)?;
        c.authenticate(opts)?;
        Ok(c)
    }

    /// Opens the TCP connection and reads the greeting, but does not answer it:
    /// the caller continues with [`Client::authenticate`] or raw packets.
    pub fn open(port: u16, timeout: Duration) -> Result<Client, SqlError> {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let stream = TcpStream::connect_timeout(&addr, timeout).map_err(|e| SqlError {
            errno: 2003,
            sqlstate: "HY000".into(),
            message: format!("Can't connect to server on '127.0.0.1:{port}' ({e})"),
        })?;
        stream
            .set_read_timeout(Some(timeout))
            .map_err(|e| SqlError::lost(&e))?;
        stream
            .set_write_timeout(Some(timeout))
            .map_err(|e| SqlError::lost(&e))?;
        let _ = stream.set_nodelay(true);
        let mut c = Client {
            stream,
            seq: 0,
            capabilities: 0,
            greeting: Greeting {
                server_version: String::new(),
                connection_id: 0,
                capabilities: 0,
                scramble: Vec::new(),
                auth_plugin: String::new(),
            },
            column_types: Vec::new(),
        };
        let payload = c.read_packet().map_err(|e| SqlError::lost(&e))?;
        if payload.first() == Some(&0xff) {
            // e.g. 1040 Too many connections, sent instead of a greeting.
            return Err(parse_err(&payload));
        }
        c.greeting = parse_greeting(&payload)?;
        Ok(c)
    }

    /// Sends the HandshakeResponse41 and finishes authentication, following an
    /// AuthSwitchRequest to `mysql_native_password` if the server sends one.
    pub fn authenticate(&mut self, opts: &Connect) -> Result<(), SqlError> {
        let mut caps = caps::LONG_PASSWORD
            | caps::LONG_FLAG
            | caps::PROTOCOL_41
            | caps::TRANSACTIONS
            | caps::SECURE_CONNECTION
            | caps::MULTI_RESULTS
            | caps::PS_MULTI_RESULTS
            | caps::PLUGIN_AUTH
            | caps::PLUGIN_AUTH_LENENC;
        if opts.db.is_some() {
            caps |= caps::CONNECT_WITH_DB;
        }
        if opts.deprecate_eof {
            caps |= caps::DEPRECATE_EOF;
        }
        if opts.multi_statements {
            caps |= caps::MULTI_STATEMENTS;
        }
        caps &= self.greeting.capabilities | caps::LONG_PASSWORD;
        self.capabilities = caps;

        let auth = native_password_scramble(&opts.password, &self.greeting.scramble);
        let mut p = Vec::with_capacity(128);
        p.extend_from_slice(&caps.to_le_bytes());
        p.extend_from_slice(&(16u32 << 20).to_le_bytes()); // max packet 16 MiB
        p.push(45); // utf8mb4_general_ci
        p.extend_from_slice(&[0u8; 23]);
        p.extend_from_slice(opts.user.as_bytes());
        p.push(0);
        if caps & caps::PLUGIN_AUTH_LENENC != 0 {
            put_lenenc_bytes(&mut p, &auth);
        } else {
            p.push(auth.len() as u8);
            p.extend_from_slice(&auth);
        }
        if let (Some(db), true) = (&opts.db, caps & caps::CONNECT_WITH_DB != 0) {
            p.extend_from_slice(db.as_bytes());
            p.push(0);
        }
        if caps & caps::PLUGIN_AUTH != 0 {
            p.extend_from_slice(b"mysql_native_password\0");
        }
        self.write_packet(&p).map_err(|e| SqlError::lost(&e))?;

        loop {
            let resp = self.read_packet().map_err(|e| SqlError::lost(&e))?;
            match resp.first() {
                Some(0x00) => return Ok(()),
                Some(0xff) => return Err(parse_err(&resp)),
                Some(0xfe) => {
                    // AuthSwitchRequest: plugin name NUL, then the new scramble.
                    let mut r = Reader::new(&resp[1..]);
                    let plugin = String::from_utf8_lossy(r.null_str()?).into_owned();
                    if plugin != "mysql_native_password" {
                        return Err(SqlError::malformed(&format!(
                            "server asked for auth plugin {plugin}"
                        )));
                    }
                    let mut scramble = r.rest().to_vec();
                    if scramble.last() == Some(&0) {
                        scramble.pop();
                    }
                    let auth = native_password_scramble(&opts.password, &scramble);
                    self.write_packet(&auth).map_err(|e| SqlError::lost(&e))?;
                }
                Some(0x01) => {
                    // AuthMoreData: not used by mysql_native_password; keep reading.
                }
                _ => return Err(SqlError::malformed("unexpected auth response")),
            }
        }
    }

    /// COM_CHANGE_USER to `user` with `password` (mysql_native_password,
    /// computed with the greeting's scramble), optionally into `db`; follows an
    /// AuthSwitchRequest to mysql_native_password.
    pub fn change_user(&mut self, user: &str, password: &str, db: &str) -> Result<(), SqlError> {
        let auth = native_password_scramble(password, &self.greeting.scramble);
        let mut p = vec![0x11];
        p.extend_from_slice(user.as_bytes());
        p.push(0);
        p.push(auth.len() as u8);
        p.extend_from_slice(&auth);
        p.extend_from_slice(db.as_bytes());
        p.push(0);
        p.extend_from_slice(&45u16.to_le_bytes());
        p.extend_from_slice(b"mysql_native_password\0");
        self.seq = 0;
        self.write_packet(&p).map_err(|e| SqlError::lost(&e))?;
        loop {
            let resp = self.read_packet().map_err(|e| SqlError::lost(&e))?;
            match resp.first() {
                Some(0x00) => return Ok(()),
                Some(0xff) => return Err(parse_err(&resp)),
                Some(0xfe) => {
                    let mut r = Reader::new(&resp[1..]);
                    r.null_str()?;
                    let mut scramble = r.rest().to_vec();
                    if scramble.last() == Some(&0) {
                        scramble.pop();
                    }
                    let auth = native_password_scramble(password, &scramble);
                    self.write_packet(&auth).map_err(|e| SqlError::lost(&e))?;
                }
                _ => return Err(SqlError::malformed("unexpected COM_CHANGE_USER response")),
            }
        }
    }

    /// The capability flags agreed in the handshake.
    pub fn capabilities(&self) -> u32 {
        self.capabilities
    }

    /// The column types (`MYSQL_TYPE_*` bytes, e.g. 0x05 for DOUBLE, 0xf6 for
    /// NEWDECIMAL) of the last result set this client read; empty after an OK.
    /// Differential tests use it to compare approximate values approximately.
    pub fn column_types(&self) -> &[u8] {
        &self.column_types
    }

    /// Runs one statement with COM_QUERY and returns its (first) outcome; further
    /// results of a multi-statement are read and dropped.
    pub fn query(&mut self, sql: &str) -> Result<QueryOutcome, SqlError> {
        let mut all = self.query_multi(sql)?;
        Ok(all.remove(0))
    }

    /// Runs COM_QUERY and returns every result; an error ends the list (as the
    /// server stops at the first failing statement) and is returned as `Err`.
    pub fn query_multi(&mut self, sql: &str) -> Result<Vec<QueryOutcome>, SqlError> {
        self.query_bytes(sql.as_bytes())
    }

    /// [`Client::query_multi`] with the text as bytes, sent as they are (they
    /// need not be UTF-8: the fuzz test sends mutated text).
    pub fn query_bytes(&mut self, sql: &[u8]) -> Result<Vec<QueryOutcome>, SqlError> {
        let mut p = Vec::with_capacity(sql.len() + 1);
        p.push(com::QUERY);
        p.extend_from_slice(sql);
        self.command(&p)?;
        let mut out = Vec::new();
        loop {
            let (outcome, more) = self.read_result(None)?;
            out.push(outcome);
            if !more {
                return Ok(out);
            }
        }
    }

    /// Runs a statement that must succeed; panics with the statement and the error.
    pub fn exec(&mut self, sql: &str) -> QueryOutcome {
        match self.query(sql) {
            Ok(o) => o,
            Err(e) => panic!("{sql}\n  failed: {e}"),
        }
    }

    /// Runs a statement that must fail and returns the error; panics if it succeeds.
    pub fn expect_err(&mut self, sql: &str) -> SqlError {
        match self.query(sql) {
            Ok(o) => panic!("{sql}\n  expected an error, got {o:?}"),
            Err(e) => e,
        }
    }

    /// COM_PING.
    pub fn ping(&mut self) -> Result<(), SqlError> {
        self.command(&[com::PING])?;
        let resp = self.read_packet().map_err(|e| SqlError::lost(&e))?;
        match resp.first() {
            Some(0x00) => Ok(()),
            Some(0xff) => Err(parse_err(&resp)),
            _ => Err(SqlError::malformed("unexpected reply to COM_PING")),
        }
    }

    /// COM_INIT_DB (what `USE db` does in most clients).
    pub fn init_db(&mut self, db: &str) -> Result<(), SqlError> {
        let mut p = vec![com::INIT_DB];
        p.extend_from_slice(db.as_bytes());
        self.command(&p)?;
        let resp = self.read_packet().map_err(|e| SqlError::lost(&e))?;
        match resp.first() {
            Some(0x00) => Ok(()),
            Some(0xff) => Err(parse_err(&resp)),
            _ => Err(SqlError::malformed("unexpected reply to COM_INIT_DB")),
        }
    }

    /// COM_STMT_PREPARE.
    pub fn prepare(&mut self, sql: &str) -> Result<Prepared, SqlError> {
        let mut p = vec![com::STMT_PREPARE];
        p.extend_from_slice(sql.as_bytes());
        self.command(&p)?;
        let resp = self.read_packet().map_err(|e| SqlError::lost(&e))?;
        match resp.first() {
            Some(0x00) => {}
            Some(0xff) => return Err(parse_err(&resp)),
            _ => return Err(SqlError::malformed("unexpected reply to COM_STMT_PREPARE")),
        }
        let mut r = Reader::new(&resp[1..]);
        let id = r.u32()?;
        let columns = r.u16()?;
        let params = r.u16()?;
        for n in [params, columns] {
            if n > 0 {
                for _ in 0..n {
                    self.read_packet().map_err(|e| SqlError::lost(&e))?;
                }
                if self.capabilities & caps::DEPRECATE_EOF == 0 {
                    self.read_packet().map_err(|e| SqlError::lost(&e))?;
                }
            }
        }
        Ok(Prepared {
            id,
            params,
            columns,
        })
    }

    /// COM_STMT_EXECUTE of statement `id` with `params` (types sent each time).
    pub fn execute(&mut self, id: u32, params: &[Param]) -> Result<QueryOutcome, SqlError> {
        let payload = stmt_execute_payload(id, params);
        self.execute_raw(&payload)
    }

    /// Sends a hand-made COM_STMT_EXECUTE payload (command byte included) and reads
    /// the reply: OK, ERR, or a binary result set.
    pub fn execute_raw(&mut self, payload: &[u8]) -> Result<QueryOutcome, SqlError> {
        self.command(payload)?;
        let (outcome, mut more) = self.read_result(Some(()))?;
        while more {
            more = self.read_result(Some(()))?.1;
        }
        Ok(outcome)
    }

    /// COM_STMT_CLOSE (the server sends no reply).
    pub fn close_statement(&mut self, id: u32) -> Result<(), SqlError> {
        let mut p = vec![com::STMT_CLOSE];
        p.extend_from_slice(&id.to_le_bytes());
        self.command(&p)
    }

    /// Sends COM_QUIT and closes the socket.
    pub fn quit(mut self) {
        let _ = self.command(&[com::QUIT]);
        let _ = self.stream.shutdown(Shutdown::Both);
    }

    /// Sends one command packet, resetting the sequence number.
    fn command(&mut self, payload: &[u8]) -> Result<(), SqlError> {
        self.seq = 0;
        self.write_packet(payload).map_err(|e| SqlError::lost(&e))
    }

    /// Reads one result (OK, ERR, or a result set). `binary` selects the binary row
    /// format of COM_STMT_EXECUTE. Returns whether another result follows.
    fn read_result(&mut self, binary: Option<()>) -> Result<(QueryOutcome, bool), SqlError> {
        let first = self.read_packet().map_err(|e| SqlError::lost(&e))?;
        self.column_types.clear();
        match first.first() {
            Some(0x00) => {
                let ok = parse_ok(&first)?;
                return Ok((
                    QueryOutcome::Ok {
                        affected_rows: ok.affected_rows,
                        last_insert_id: ok.last_insert_id,
                    },
                    ok.status & SERVER_MORE_RESULTS_EXISTS != 0,
                ));
            }
            Some(0xff) => return Err(parse_err(&first)),
            Some(0xfb) => return Err(SqlError::malformed("LOCAL INFILE request")),
            None => return Err(SqlError::malformed("empty packet")),
            _ => {}
        }
        let ncols = Reader::new(&first)
            .lenenc()?
            .ok_or_else(|| SqlError::malformed("NULL column count"))? as usize;
        let mut cols = Vec::with_capacity(ncols);
        for _ in 0..ncols {
            let p = self.read_packet().map_err(|e| SqlError::lost(&e))?;
            cols.push(parse_column(&p)?);
        }
        self.column_types = cols.iter().map(|c| c.column_type).collect();
        let deprecate_eof = self.capabilities & caps::DEPRECATE_EOF != 0;
        if !deprecate_eof {
            let eof = self.read_packet().map_err(|e| SqlError::lost(&e))?;
            if eof.first() != Some(&0xfe) {
                return Err(SqlError::malformed("expected EOF after column definitions"));
            }
        }
        let mut rows = Vec::new();
        loop {
            let p = self.read_packet().map_err(|e| SqlError::lost(&e))?;
            let is_end = p.first() == Some(&0xfe)
                && if deprecate_eof {
                    p.len() < MAX_PAYLOAD
                } else {
                    p.len() < 9
                };
            if is_end {
                let status = if deprecate_eof {
                    parse_ok(&p)?.status
                } else {
                    let mut r = Reader::new(&p[1..]);
                    r.u16()?; // warnings
                    r.u16()?
                };
                return Ok((
                    QueryOutcome::Rows(rows),
                    status & SERVER_MORE_RESULTS_EXISTS != 0,
                ));
            }
            if p.first() == Some(&0xff) {
                return Err(parse_err(&p));
            }
            rows.push(if binary.is_some() {
                decode_binary_row(&p, &cols)?
            } else {
                let mut r = Reader::new(&p);
                let mut row = Vec::with_capacity(ncols);
                for _ in 0..ncols {
                    row.push(
                        r.lenenc_bytes()?
                            .map(|b| String::from_utf8_lossy(b).into_owned()),
                    );
                }
                row
            });
        }
    }

    /// Starts a new command: the next packet written has sequence id 0.
    pub fn reset_sequence(&mut self) {
        self.seq = 0;
    }

    /// Writes one logical packet (split at 16 MiB - 1) with the next sequence ids.
    pub fn write_packet(&mut self, payload: &[u8]) -> io::Result<()> {
        let mut chunks = payload.chunks(MAX_PAYLOAD).peekable();
        let mut buf = Vec::with_capacity(payload.len() + 8);
        if payload.is_empty() {
            buf.extend_from_slice(&[0, 0, 0, self.seq]);
            self.seq = self.seq.wrapping_add(1);
        }
        while let Some(chunk) = chunks.next() {
            let len = chunk.len() as u32;
            buf.extend_from_slice(&len.to_le_bytes()[..3]);
            buf.push(self.seq);
            self.seq = self.seq.wrapping_add(1);
            buf.extend_from_slice(chunk);
            if chunks.peek().is_none() && chunk.len() == MAX_PAYLOAD {
                buf.extend_from_slice(&[0, 0, 0, self.seq]);
                self.seq = self.seq.wrapping_add(1);
            }
        }
        self.stream.write_all(&buf)
    }

    /// Sends one physical packet with an explicit sequence id, unchanged: no
    /// splitting, any length the caller likes up to 16 MiB - 1.
    pub fn send_packet(&mut self, seq: u8, payload: &[u8]) -> io::Result<()> {
        let mut buf = Vec::with_capacity(payload.len() + 4);
        buf.extend_from_slice(&(payload.len() as u32).to_le_bytes()[..3]);
        buf.push(seq);
        buf.extend_from_slice(payload);
        self.stream.write_all(&buf)
    }

    /// Writes bytes to the socket as they are (e.g. a header without its payload).
    pub fn send_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes)
    }

    /// Reads one logical packet (joining 16 MiB continuation packets) and returns
    /// its payload; the next sequence id to send follows the last one read.
    pub fn read_packet(&mut self) -> io::Result<Vec<u8>> {
        let mut payload = Vec::new();
        loop {
            let mut header = [0u8; 4];
            self.stream.read_exact(&mut header)?;
            let len = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
            self.seq = header[3].wrapping_add(1);
            let start = payload.len();
            payload.resize(start + len, 0);
            self.stream.read_exact(&mut payload[start..])?;
            if len < MAX_PAYLOAD {
                return Ok(payload);
            }
        }
    }

    /// Whether the server has closed the connection: waits up to `timeout` for
    /// end-of-file, skipping any packets (e.g. an ERR) sent before it.
    pub fn closed_by_server(&mut self, timeout: Duration) -> bool {
        let _ = self.stream.set_read_timeout(Some(timeout));
        let mut buf = [0u8; 4096];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => return true,
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => return true,
                Err(_) => return false,
            }
        }
    }

    /// The underlying socket, for tests that need to shut it down themselves.
    pub fn stream(&self) -> &TcpStream {
        &self.stream
    }
}

fn parse_greeting(payload: &[u8]) -> Result<Greeting, SqlError> {
    let mut r = Reader::new(payload);
    let protocol = r.u8()?;
    if protocol != 10 {
        return Err(SqlError::malformed(&format!(
            "handshake protocol version {protocol}"
        )));
    }
    let server_version = String::from_utf8_lossy(r.null_str()?).into_owned();
    let connection_id = r.u32()?;
    let mut scramble = r.bytes(8)?.to_vec();
    r.u8()?; // filler
    let mut capabilities = u32::from(r.u16()?);
    let mut auth_plugin = String::from("mysql_native_password");
    if r.remaining() > 0 {
        r.u8()?; // charset
        r.u16()?; // status
        capabilities |= u32::from(r.u16()?) << 16;
        let auth_len = r.u8()? as usize;
        r.bytes(10)?; // reserved (MariaDB keeps its extended capabilities here)
        if capabilities & caps::SECURE_CONNECTION != 0 {
            let n = auth_len.saturating_sub(8).max(13);
            let part2 = r.bytes(n.min(r.remaining()))?;
            scramble.extend_from_slice(part2);
            if scramble.last() == Some(&0) {
                scramble.pop();
            }
        }
        if capabilities & caps::PLUGIN_AUTH != 0 && r.remaining() > 0 {
            auth_plugin = String::from_utf8_lossy(r.null_str().unwrap_or(b"")).into_owned();
        }
    }
    Ok(Greeting {
        server_version,
        connection_id,
        capabilities,
        scramble,
        auth_plugin,
    })
}

/// Builds a COM_STMT_EXECUTE payload (command byte included) that binds
/// `params` with their types, in the layout the protocol page describes.
pub fn stmt_execute_payload(id: u32, params: &[Param]) -> Vec<u8> {
    let mut p = vec![com::STMT_EXECUTE];
    p.extend_from_slice(&id.to_le_bytes());
    p.push(0); // CURSOR_TYPE_NO_CURSOR
    p.extend_from_slice(&1u32.to_le_bytes()); // iteration count
    if params.is_empty() {
        return p;
    }
    let mut nulls = vec![0u8; params.len().div_ceil(8)];
    for (i, v) in params.iter().enumerate() {
        if *v == Param::Null {
            nulls[i / 8] |= 1 << (i % 8);
        }
    }
    p.extend_from_slice(&nulls);
    p.push(1); // new_params_bound_flag
    for v in params {
        let t: u16 = match v {
            Param::Null => 0x06,
            Param::Int(_) => 0x08,
            Param::Str(_) => 0xfd,
        };
        p.extend_from_slice(&t.to_le_bytes());
    }
    for v in params {
        match v {
            Param::Null => {}
            Param::Int(i) => p.extend_from_slice(&i.to_le_bytes()),
            Param::Str(s) => put_lenenc_bytes(&mut p, s.as_bytes()),
        }
    }
    p
}

/// Converts one binary-protocol row to the text form the text protocol would send.
fn decode_binary_row(p: &[u8], cols: &[ColumnInfo]) -> Result<Vec<Option<String>>, SqlError> {
    let mut r = Reader::new(p);
    if r.u8()? != 0x00 {
        return Err(SqlError::malformed("binary row without 0x00 header"));
    }
    let bitmap = r.bytes((cols.len() + 7 + 2) / 8)?.to_vec();
    let mut row = Vec::with_capacity(cols.len());
    for (i, c) in cols.iter().enumerate() {
        let bit = i + 2;
        if bitmap[bit / 8] & (1 << (bit % 8)) != 0 {
            row.push(None);
            continue;
        }
        let unsigned = c.flags & 32 != 0;
        let text = match c.column_type {
            0x01 => int_text(r.uint(1)?, 1, unsigned),
            0x02 | 0x0d => int_text(r.uint(2)?, 2, unsigned),
            0x03 | 0x09 => int_text(r.uint(4)?, 4, unsigned),
            0x08 => int_text(r.uint(8)?, 8, unsigned),
            0x04 => format!("{}", f32::from_bits(r.u32()?)),
            0x05 => {
                let v = f64::from_bits(r.uint(8)?);
                if c.decimals < 31 {
                    format!("{v:.*}", usize::from(c.decimals))
                } else {
                    format!("{v}")
                }
            }
            0x07 | 0x0a | 0x0c => {
                let n = r.u8()? as usize;
                let b = r.bytes(n)?;
                let year = if n >= 2 {
                    u16::from_le_bytes([b[0], b[1]])
                } else {
                    0
                };
                let (mo, d) = if n >= 4 { (b[2], b[3]) } else { (0, 0) };
                let mut s = format!("{year:04}-{mo:02}-{d:02}");
                if c.column_type != 0x0a {
                    let (h, mi, se) = if n >= 7 {
                        (b[4], b[5], b[6])
                    } else {
                        (0, 0, 0)
                    };
                    s.push_str(&format!(" {h:02}:{mi:02}:{se:02}"));
                    if n >= 11 {
                        let us = u32::from_le_bytes([b[7], b[8], b[9], b[10]]);
                        s.push_str(&format!(".{us:06}"));
                    }
                }
                s
            }
            0x0b => {
                let n = r.u8()? as usize;
                let b = r.bytes(n)?;
                if n >= 8 {
                    let neg = if b[0] == 1 { "-" } else { "" };
                    let days = u32::from_le_bytes([b[1], b[2], b[3], b[4]]);
                    let h = days * 24 + u32::from(b[5]);
                    format!("{neg}{h:02}:{:02}:{:02}", b[6], b[7])
                } else {
                    "00:00:00".into()
                }
            }
            _ => {
                let b = r
                    .lenenc_bytes()?
                    .ok_or_else(|| SqlError::malformed("NULL marker in binary row"))?;
                String::from_utf8_lossy(b).into_owned()
            }
        };
        row.push(Some(text));
    }
    Ok(row)
}

fn int_text(raw: u64, bytes: u32, unsigned: bool) -> String {
    if unsigned {
        raw.to_string()
    } else {
        let shift = 64 - 8 * bytes;
        (((raw << shift) as i64) >> shift).to_string()
    }
}
