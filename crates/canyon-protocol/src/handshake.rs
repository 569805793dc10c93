//! Connection phase: Protocol::HandshakeV10, SSLRequest, HandshakeResponse41,
//! AuthSwitchRequest, AuthMoreData, COM_CHANGE_USER, and the two password
//! proofs Canyon verifies.
//!
//! ```text
//!  server                                   client
//!    | -- HandshakeV10 (seq 0, scramble) ----> |  CLIENT_SSL offered with a certificate
//!    | <-- SSLRequest (seq 1) ---------------- |  only for TLS: 32 bytes, then the
//!    |  ====== TLS handshake ================  |  TLS handshake on the same socket
//!    | <-- HandshakeResponse41 (seq 1 or 2) -- |  user, auth response, db, plugin
//!    | -- AuthSwitchRequest ------------------> |  only if the client's plugin is not
//!    | <-- auth response -------------------- |  the account's
//!    | -- AuthMoreData / <-- password ... ---> |  caching_sha2_password only
//!    | -- OK or ERR 1045 -------------------> |
//! ```
//!
//! mysql_native_password (MySQL manual, "Native Authentication"): the server stores
//! `SHA1(SHA1(password))`; the client sends
//! `SHA1(password) XOR SHA1(scramble ++ SHA1(SHA1(password)))`. The server XORs the
//! response with `SHA1(scramble ++ stored)` to recover `SHA1(password)` and checks
//! that its SHA1 equals the stored hash. The password itself never crosses the wire
//! or sits on the server.
//!
//! caching_sha2_password's fast path is the same construction with SHA-256 (the
//! client sends `SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) ++ scramble)`) against
//! `SHA256(SHA256(pw))`, which the server holds only in memory; its full path and
//! the cache are in canyon-server's `auth` module.

use super::codec::{put_nul_bytes, put_u16, put_u32, Cursor, Truncated};
use super::constants::{capability, status, HANDSHAKE_CHARSET, NATIVE_PASSWORD_PLUGIN};
use rand::Rng;
use sha1::{Digest, Sha1};
use sha2::Sha256;

/// The 20 random bytes a client mixes into its password proof.
pub type Scramble = [u8; 20];

/// A fresh scramble. Bytes are 1..=127 and never `$`, as MySQL's
/// `generate_user_salt` makes them: no 0x00, so the NUL-terminated second half of
/// the handshake field stays intact in every client.
pub fn new_scramble() -> Scramble {
    let mut rng = rand::thread_rng();
    let mut s = [0u8; 20];
    for b in &mut s {
        let mut v: u8 = rng.gen_range(1..=127);
        if v == b'$' {
            v += 1;
        }
        *b = v;
    }
    s
}

/// Appends the payload of Protocol::HandshakeV10.
pub fn write_handshake_v10(
    out: &mut Vec<u8>,
    server_version: &str,
    connection_id: u32,
    scramble: &Scramble,
    tls: bool,
) {
    let caps = if tls {
        capability::SERVER | capability::SSL
    } else {
        capability::SERVER
    };
    out.push(10); // protocol version
    put_nul_bytes(out, server_version.as_bytes());
    put_u32(out, connection_id);
    out.extend_from_slice(&scramble[..8]); // auth-plugin-data-part-1
    out.push(0); // filler
    put_u16(out, caps as u16); // capability flags, lower 2 bytes
    out.push(HANDSHAKE_CHARSET);
    put_u16(out, status::AUTOCOMMIT);
    put_u16(out, (caps >> 16) as u16); // capability flags, upper 2 bytes
    out.push(21); // length of auth-plugin-data (20 + the trailing NUL)
    out.extend_from_slice(&[0; 10]); // reserved
    put_nul_bytes(out, &scramble[8..]); // auth-plugin-data-part-2 (12 bytes + NUL)
    put_nul_bytes(out, NATIVE_PASSWORD_PLUGIN.as_bytes());
}

/// Appends the payload of an AuthSwitchRequest to `plugin`, with the
/// connection's scramble (NUL-terminated, as MySQL sends it).
pub fn write_auth_switch(out: &mut Vec<u8>, plugin: &str, scramble: &Scramble) {
    out.push(0xfe);
    put_nul_bytes(out, plugin.as_bytes());
    put_nul_bytes(out, scramble);
}

/// Appends the payload of an AuthMoreData packet (`0x01` then `data`).
pub fn write_auth_more_data(out: &mut Vec<u8>, data: &[u8]) {
    out.push(0x01);
    out.extend_from_slice(data);
}

/// Whether `payload` is an SSLRequest: the first 32 bytes of a
/// HandshakeResponse41, with CLIENT_SSL set, and nothing after them.
pub fn is_ssl_request(payload: &[u8]) -> bool {
    payload.len() == 32
        && payload
            .get(..4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .is_some_and(|b| u32::from_le_bytes(b) & capability::SSL != 0)
}

/// What a client says in Protocol::HandshakeResponse41.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeResponse {
    /// The client's capability flags (not yet intersected with the server's).
    pub capabilities: u32,
    /// The largest packet the client accepts.
    pub max_packet_size: u32,
    /// The collation id the client asked for.
    pub charset: u8,
    /// User name (as sent; MySQL user names are case-sensitive).
    pub user: String,
    /// The auth plugin's response to the scramble (empty for no password).
    pub auth_response: Vec<u8>,
    /// The database to start in, with CLIENT_CONNECT_WITH_DB.
    pub database: Option<String>,
    /// The client's auth plugin, with CLIENT_PLUGIN_AUTH.
    pub auth_plugin: Option<String>,
    /// Connection attributes (`_client_name`, `program_name`, ...).
    pub attributes: Vec<(String, String)>,
}

/// Why a handshake response was refused before authentication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandshakeError {
    /// The packet is shorter than its fields say.
    Malformed,
    /// The client does not speak the 4.1 protocol.
    Pre41Client,
    /// The client asked for TLS, which this server does not offer (it has no
    /// certificate).
    SslRequested,
}

impl From<Truncated> for HandshakeError {
    fn from(_: Truncated) -> Self {
        HandshakeError::Malformed
    }
}

/// Parses Protocol::HandshakeResponse41. Every field is bounds-checked.
pub fn parse_handshake_response(payload: &[u8]) -> Result<HandshakeResponse, HandshakeError> {
    let mut c = Cursor::new(payload);
    let capabilities = c.u32()?;
    if capabilities & capability::PROTOCOL_41 == 0 {
        return Err(HandshakeError::Pre41Client);
    }
    let max_packet_size = c.u32()?;
    let charset = c.u8()?;
    c.skip(23)?; // filler
    if c.is_empty() && capabilities & capability::SSL != 0 {
        // An SSLRequest stops here; the connection layer upgrades to TLS before
        // parsing a response, so one reaching this parser was not wanted.
        return Err(HandshakeError::SslRequested);
    }
    let user = lossy(c.nul_bytes()?);
    let auth_response = if capabilities & capability::PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
        c.lenenc_bytes()?.to_vec()
    } else if capabilities & capability::SECURE_CONNECTION != 0 {
        let len = c.u8()?;
        c.take(usize::from(len))?.to_vec()
    } else {
        c.nul_bytes()?.to_vec()
    };
    let database = if capabilities & capability::CONNECT_WITH_DB != 0 && !c.is_empty() {
        Some(lossy(c.nul_bytes()?)).filter(|db| !db.is_empty())
    } else {
        None
    };
    let auth_plugin = if capabilities & capability::PLUGIN_AUTH != 0 && !c.is_empty() {
        Some(lossy(c.nul_bytes()?))
    } else {
        None
    };
    let mut attributes = Vec::new();
    if capabilities & capability::CONNECT_ATTRS != 0 && !c.is_empty() {
        let mut attrs = Cursor::new(c.lenenc_bytes()?);
        while !attrs.is_empty() {
            let key = lossy(attrs.lenenc_bytes()?);
            let value = lossy(attrs.lenenc_bytes()?);
            attributes.push((key, value));
        }
    }
    Ok(HandshakeResponse {
        capabilities,
        max_packet_size,
        charset,
        user,
        auth_response,
        database,
        auth_plugin,
        attributes,
    })
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Checks a mysql_native_password response against the stored
/// `SHA1(SHA1(password))`; `None` stored means the account has no password, and
/// then only an empty response passes.
pub fn verify_native_password(
    scramble: &Scramble,
    response: &[u8],
    stored: Option<&[u8; 20]>,
) -> bool {
    let Some(stored) = stored else {
        return response.is_empty();
    };
    let Ok(response) = <&[u8; 20]>::try_from(response) else {
        return false;
    };
    let mut h = Sha1::new();
    h.update(scramble);
    h.update(stored);
    let mask = h.finalize();
    let mut sha1_password = [0u8; 20];
    for (i, b) in sha1_password.iter_mut().enumerate() {
        *b = response[i] ^ mask[i];
    }
    let candidate = Sha1::digest(sha1_password);
    // Compare without an early exit so timing does not reveal matching prefixes.
    candidate
        .iter()
        .zip(stored.iter())
        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
        == 0
}

/// `SHA256(SHA256(password))`: what caching_sha2_password's fast path checks a
/// scramble against.
pub fn sha2_stage2(password: &[u8]) -> [u8; 32] {
    Sha256::digest(Sha256::digest(password)).into()
}

/// Checks a caching_sha2_password fast-path response against the cached
/// `SHA256(SHA256(password))`: XOR with `SHA256(stage2 ++ scramble)` recovers
/// `SHA256(password)`, whose SHA-256 must equal `stage2`.
pub fn verify_sha2_scramble(scramble: &Scramble, response: &[u8], stage2: &[u8; 32]) -> bool {
    let Ok(response) = <&[u8; 32]>::try_from(response) else {
        return false;
    };
    let mut h = Sha256::new();
    h.update(stage2);
    h.update(scramble);
    let mask = h.finalize();
    let mut stage1 = [0u8; 32];
    for (i, b) in stage1.iter_mut().enumerate() {
        *b = response[i] ^ mask[i];
    }
    Sha256::digest(stage1)
        .iter()
        .zip(stage2.iter())
        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
        == 0
}

/// What a client sends in COM_CHANGE_USER (after the command byte).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeUser {
    /// The new user.
    pub user: String,
    /// The auth response, computed with the connection's original scramble.
    pub auth_response: Vec<u8>,
    /// The database to use (none: no current database).
    pub database: Option<String>,
    /// The client's auth plugin, with CLIENT_PLUGIN_AUTH.
    pub auth_plugin: Option<String>,
}

/// Parses COM_CHANGE_USER's body under the connection's capabilities.
pub fn parse_change_user(body: &[u8], capabilities: u32) -> Result<ChangeUser, Truncated> {
    let mut c = Cursor::new(body);
    let user = lossy(c.nul_bytes()?);
    let auth_response = if capabilities & capability::SECURE_CONNECTION != 0 {
        let len = c.u8()?;
        c.take(usize::from(len))?.to_vec()
    } else {
        c.nul_bytes()?.to_vec()
    };
    let database = Some(lossy(c.nul_bytes()?)).filter(|db| !db.is_empty());
    let mut auth_plugin = None;
    if !c.is_empty() {
        c.u16()?; // character set
        if capabilities & capability::PLUGIN_AUTH != 0 && !c.is_empty() {
            auth_plugin = Some(lossy(c.nul_bytes()?));
        }
        // Connection attributes may follow; Canyon does not keep them.
    }
    Ok(ChangeUser {
        user,
        auth_response,
        database,
        auth_plugin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::put_lenenc_bytes;

    /// The client side of mysql_native_password, written out independently:
    /// SHA1(pw) XOR SHA1(scramble ++ SHA1(SHA1(pw))).
    fn client_token(password: &str, scramble: &[u8]) -> Vec<u8> {
        let stage1 = Sha1::digest(password.as_bytes());
        let stage2 = Sha1::digest(stage1);
        let mut h = Sha1::new();
        h.update(scramble);
        h.update(stage2);
        let mix = h.finalize();
        stage1.iter().zip(mix.iter()).map(|(a, b)| a ^ b).collect()
    }

    fn stored_hash(password: &str) -> [u8; 20] {
        Sha1::digest(Sha1::digest(password.as_bytes())).into()
    }

    #[test]
    fn native_password_verifies_a_known_vector() {
        // Fixed scramble so the vector is reproducible.
        let scramble: Scramble = *b"abcdefghijklmnopqrst";
        let stored = stored_hash("secret");
        // MySQL's PASSWORD('secret') is *14E65567ABDB5135D0CFD9A70B3032C179A49EE7.
        let hex: String = stored.iter().map(|b| format!("{b:02X}")).collect();
        assert_eq!(hex, "14E65567ABDB5135D0CFD9A70B3032C179A49EE7");
        let token = client_token("secret", &scramble);
        assert!(verify_native_password(&scramble, &token, Some(&stored)));
        assert!(!verify_native_password(
            &scramble,
            &client_token("Secret", &scramble),
            Some(&stored)
        ));
        let other: Scramble = *b"tsrqponmlkjihgfedcba";
        assert!(!verify_native_password(&other, &token, Some(&stored)));
        assert!(!verify_native_password(
            &scramble,
            &token[..19],
            Some(&stored)
        ));
        assert!(!verify_native_password(&scramble, &[], Some(&stored)));
    }

    #[test]
    fn empty_password_accepts_only_empty_response() {
        let scramble = new_scramble();
        assert!(verify_native_password(&scramble, &[], None));
        assert!(!verify_native_password(&scramble, &[1; 20], None));
    }

    #[test]
    fn scramble_has_no_nul_or_dollar() {
        for _ in 0..100 {
            let s = new_scramble();
            assert!(s.iter().all(|&b| (1..=127).contains(&b) && b != b'$'));
        }
    }

    #[test]
    fn handshake_v10_layout() {
        let scramble: Scramble = *b"ABCDEFGHIJKLMNOPQRST";
        let mut out = Vec::new();
        write_handshake_v10(&mut out, "8.0.36-canyon-0.1.0", 42, &scramble, false);
        let mut tls = Vec::new();
        write_handshake_v10(&mut tls, "8.0.36-canyon-0.1.0", 42, &scramble, true);
        // The same layout; only CLIENT_SSL (bit 11, in the lower two bytes) differs.
        let at = 1 + 20 + 4 + 8 + 1;
        assert_eq!(tls[at + 1], out[at + 1] | (capability::SSL >> 8) as u8);
        assert_eq!(tls[..at + 1], out[..at + 1]);
        assert_eq!(tls[at + 2..], out[at + 2..]);
        let mut c = Cursor::new(&out);
        assert_eq!(c.u8(), Ok(10));
        assert_eq!(c.nul_bytes(), Ok(&b"8.0.36-canyon-0.1.0"[..]));
        assert_eq!(c.u32(), Ok(42));
        assert_eq!(c.take(8), Ok(&b"ABCDEFGH"[..]));
        assert_eq!(c.u8(), Ok(0));
        let lower = c.u16().expect("caps");
        assert_eq!(c.u8(), Ok(45));
        assert_eq!(c.u16(), Ok(status::AUTOCOMMIT));
        let upper = c.u16().expect("caps");
        let caps = u32::from(lower) | u32::from(upper) << 16;
        assert_eq!(caps, capability::SERVER);
        assert_eq!(caps & capability::SSL, 0);
        assert_ne!(caps & capability::DEPRECATE_EOF, 0);
        assert_eq!(c.u8(), Ok(21));
        assert_eq!(c.take(10), Ok(&[0u8; 10][..]));
        assert_eq!(c.nul_bytes(), Ok(&b"IJKLMNOPQRST"[..]));
        assert_eq!(c.nul_bytes(), Ok(NATIVE_PASSWORD_PLUGIN.as_bytes()));
        assert!(c.is_empty());
    }

    fn response(caps: u32, user: &str, auth: &[u8], db: Option<&str>, plugin: &str) -> Vec<u8> {
        let mut p = Vec::new();
        put_u32(&mut p, caps);
        put_u32(&mut p, 1 << 24);
        p.push(45);
        p.extend_from_slice(&[0; 23]);
        put_nul_bytes(&mut p, user.as_bytes());
        if caps & capability::PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
            put_lenenc_bytes(&mut p, auth);
        } else {
            p.push(auth.len() as u8);
            p.extend_from_slice(auth);
        }
        if let Some(db) = db {
            put_nul_bytes(&mut p, db.as_bytes());
        }
        put_nul_bytes(&mut p, plugin.as_bytes());
        if caps & capability::CONNECT_ATTRS != 0 {
            let mut attrs = Vec::new();
            put_lenenc_bytes(&mut attrs, b"_client_name");
            put_lenenc_bytes(&mut attrs, b"libmysql");
            put_lenenc_bytes(&mut p, &attrs);
        }
        p
    }

    #[test]
    fn parses_handshake_response41() {
        let caps = capability::SERVER;
        let p = response(
            caps,
            "root",
            &[7; 20],
            Some("sbtest"),
            "caching_sha2_password",
        );
        let r = parse_handshake_response(&p).expect("parse");
        assert_eq!(r.user, "root");
        assert_eq!(r.auth_response, vec![7; 20]);
        assert_eq!(r.database.as_deref(), Some("sbtest"));
        assert_eq!(r.auth_plugin.as_deref(), Some("caching_sha2_password"));
        assert_eq!(
            r.attributes,
            vec![("_client_name".to_string(), "libmysql".to_string())]
        );
        assert_eq!(r.charset, 45);

        // Old-style 1-byte auth length, no database, no attributes.
        let caps =
            capability::PROTOCOL_41 | capability::SECURE_CONNECTION | capability::PLUGIN_AUTH;
        let p = response(caps, "u", &[], None, "mysql_native_password");
        let r = parse_handshake_response(&p).expect("parse");
        assert_eq!((r.user.as_str(), r.auth_response.len()), ("u", 0));
        assert_eq!(r.database, None);
        assert_eq!(r.auth_plugin.as_deref(), Some("mysql_native_password"));
    }

    /// The client side of caching_sha2_password's fast path, written out
    /// independently: SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) ++ scramble).
    fn sha2_client_token(password: &str, scramble: &[u8]) -> Vec<u8> {
        let stage1 = Sha256::digest(password.as_bytes());
        let stage2 = Sha256::digest(stage1);
        let mut h = Sha256::new();
        h.update(stage2);
        h.update(scramble);
        let mask = h.finalize();
        stage1.iter().zip(mask.iter()).map(|(a, b)| a ^ b).collect()
    }

    #[test]
    fn sha2_fast_path_verifies_only_the_right_password() {
        let scramble = new_scramble();
        let stage2 = sha2_stage2(b"secret");
        let token = sha2_client_token("secret", &scramble);
        assert!(verify_sha2_scramble(&scramble, &token, &stage2));
        assert!(!verify_sha2_scramble(
            &scramble,
            &sha2_client_token("Secret", &scramble),
            &stage2
        ));
        assert!(!verify_sha2_scramble(&new_scramble(), &token, &stage2));
        assert!(!verify_sha2_scramble(&scramble, &token[..31], &stage2));
        assert!(!verify_sha2_scramble(&scramble, &[], &stage2));
    }

    #[test]
    fn ssl_request_is_exactly_32_bytes_with_client_ssl() {
        let full = response(
            capability::SERVER | capability::SSL,
            "root",
            &[7; 20],
            Some("db"),
            "mysql_native_password",
        );
        assert!(is_ssl_request(&full[..32]));
        assert!(
            !is_ssl_request(&full),
            "a full response is not an SSLRequest"
        );
        let plain = response(capability::SERVER, "root", &[], None, "x");
        assert!(!is_ssl_request(&plain[..32]), "CLIENT_SSL not set");
        assert!(!is_ssl_request(&full[..31]));
        // After TLS the full response keeps CLIENT_SSL and parses.
        let r = parse_handshake_response(&full).expect("parse");
        assert_eq!(r.user, "root");
    }

    #[test]
    fn change_user_parses_and_truncations_are_errors() {
        let caps = capability::SERVER;
        let mut body = b"bob\0".to_vec();
        body.push(20);
        body.extend_from_slice(&[9; 20]);
        body.extend_from_slice(b"shop\0");
        body.extend_from_slice(&45u16.to_le_bytes());
        body.extend_from_slice(b"caching_sha2_password\0");
        let c = parse_change_user(&body, caps).expect("parse");
        assert_eq!(c.user, "bob");
        assert_eq!(c.auth_response, vec![9; 20]);
        assert_eq!(c.database.as_deref(), Some("shop"));
        assert_eq!(c.auth_plugin.as_deref(), Some("caching_sha2_password"));
        // Up to the database the fields are required.
        for len in 0..body.len() - 2 - 22 {
            assert!(parse_change_user(&body[..len], caps).is_err(), "{len}");
        }
        // An empty database name means none.
        let c = parse_change_user(b"bob\0\0\0", caps).expect("parse");
        assert_eq!((c.auth_response.len(), c.database), (0, None));
    }

    #[test]
    fn malformed_handshake_responses_are_errors_not_panics() {
        let caps = capability::SERVER;
        let full = response(caps, "root", &[7; 20], Some("db"), "mysql_native_password");
        // Every truncation either parses (optional trailing fields) or is Malformed.
        for len in 0..full.len() {
            match parse_handshake_response(&full[..len]) {
                Ok(_) | Err(HandshakeError::Malformed) => {}
                Err(e) => panic!("unexpected {e:?} at {len}"),
            }
        }
        assert_eq!(
            parse_handshake_response(&full[..10]),
            Err(HandshakeError::Malformed)
        );
        // Pre-4.1 clients and SSL requests are refused.
        let mut old = full.clone();
        old[1] &= !((capability::PROTOCOL_41 >> 8) as u8);
        assert_eq!(
            parse_handshake_response(&old),
            Err(HandshakeError::Pre41Client)
        );
        let mut ssl = full[..32].to_vec();
        ssl[1] |= (capability::SSL >> 8) as u8;
        assert_eq!(
            parse_handshake_response(&ssl),
            Err(HandshakeError::SslRequested)
        );
        // An auth length pointing past the end.
        let mut bad = full.clone();
        let at = 32 + 5; // after "root\0"
        bad[at] = 0xfc;
        bad.truncate(at + 3);
        assert_eq!(
            parse_handshake_response(&bad),
            Err(HandshakeError::Malformed)
        );
        // Garbage of every short length.
        for n in 0..64 {
            let junk: Vec<u8> = (0..n).map(|i| (i * 37 + 255) as u8).collect();
            let _ = parse_handshake_response(&junk);
        }
    }
}
