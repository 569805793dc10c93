//! What an account stores to check a password, per authentication plugin.
//!
//! Canyon never stores a password. Each account stores one *verifier*, chosen by
//! its plugin (`CREATE USER ... IDENTIFIED WITH plugin BY 'pw'`):
//!
//! | plugin | stored | what the wire protocol proves |
//! |---|---|---|
//! | `mysql_native_password` (default) | `SHA1(SHA1(pw))` | knowledge of `SHA1(pw)`, against a 20-byte scramble |
//! | `caching_sha2_password` | PBKDF2-HMAC-SHA256 of `pw` with a random salt | fast path: knowledge of `SHA256(pw)` against a cached `SHA256(SHA256(pw))`; full: `pw` itself, only over TLS or a Unix socket |
//!
//! Why caching_sha2_password has two verifiers: its fast path needs
//! `SHA256(SHA256(pw))`, an unsalted hash cheap to attack with a dictionary, so
//! (as in MySQL) that value is never written to disk — the server learns it from
//! one full authentication, in which the client sends the cleartext password over
//! a secure transport, and keeps it in memory. What is persisted is a salted,
//! deliberately slow hash (MySQL uses SHA256-crypt with 5,000 rounds; Canyon uses
//! PBKDF2-HMAC-SHA256 with as many, from RustCrypto's `pbkdf2`).
//!
//! The wire-level halves (scrambles, the fast-path cache, the exchange) live in
//! the server crate; this module only creates and checks verifiers.

use rand::RngCore;
use sha1::{Digest, Sha1};
use sha2::Sha256;

/// The plugin that checks an account's password.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthPlugin {
    /// mysql_native_password: SHA1-based challenge–response.
    NativePassword,
    /// caching_sha2_password: SHA256-based challenge–response with a server-side
    /// cache, full authentication over a secure transport.
    CachingSha2Password,
}

impl AuthPlugin {
    /// The plugin's name on the wire and in `IDENTIFIED WITH`.
    pub fn name(self) -> &'static str {
        match self {
            AuthPlugin::NativePassword => "mysql_native_password",
            AuthPlugin::CachingSha2Password => "caching_sha2_password",
        }
    }

    /// The plugin named `name` (case-insensitive), if Canyon has it.
    pub fn from_name(name: &str) -> Option<AuthPlugin> {
        if name.eq_ignore_ascii_case("mysql_native_password") {
            Some(AuthPlugin::NativePassword)
        } else if name.eq_ignore_ascii_case("caching_sha2_password") {
            Some(AuthPlugin::CachingSha2Password)
        } else {
            None
        }
    }
}

/// PBKDF2 rounds of a caching_sha2_password verifier (MySQL's SHA256-crypt
/// default is also 5,000): a few milliseconds per full authentication.
const SHA2_ROUNDS: u32 = 5000;

/// `SHA1(SHA1(password))` — what mysql_native_password stores.
pub fn native_hash(password: &str) -> [u8; 20] {
    let once = Sha1::digest(password.as_bytes());
    Sha1::digest(once).into()
}

/// A new caching_sha2_password verifier for `password`:
/// `pbkdf2-sha256$<rounds>$<salt hex>$<hash hex>`.
pub fn sha2_verifier(password: &str) -> String {
    let mut salt = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut salt);
    sha2_verifier_with(password, &salt, SHA2_ROUNDS)
}

fn sha2_verifier_with(password: &str, salt: &[u8], rounds: u32) -> String {
    let mut out = [0u8; 32];
    pbkdf2::pbkdf2_hmac::<Sha256>(password.as_bytes(), salt, rounds, &mut out);
    format!("pbkdf2-sha256${rounds}${}${}", hex(salt), hex(&out))
}

/// Whether `password` matches `verifier` (from [`sha2_verifier`]). A malformed
/// verifier matches nothing.
pub fn check_sha2_verifier(verifier: &str, password: &str) -> bool {
    let mut parts = verifier.split('$');
    let (Some("pbkdf2-sha256"), Some(rounds), Some(salt), Some(hash), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return false;
    };
    let (Ok(rounds), Some(salt)) = (rounds.parse::<u32>(), unhex(salt)) else {
        return false;
    };
    if rounds == 0 {
        return false;
    }
    let candidate = sha2_verifier_with(password, &salt, rounds);
    let expected = format!("pbkdf2-sha256${rounds}${}${hash}", hex(&salt));
    // Compare without an early exit so timing does not reveal matching prefixes.
    candidate.len() == expected.len()
        && candidate
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// Lower-case hex.
pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Bytes from hex; `None` if malformed.
pub(crate) fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha2_verifier_checks_the_password_and_is_salted() {
        let v = sha2_verifier("secret");
        assert!(check_sha2_verifier(&v, "secret"));
        assert!(!check_sha2_verifier(&v, "Secret"));
        assert!(!check_sha2_verifier(&v, ""));
        // A fresh salt each time: the same password gives a different verifier.
        assert_ne!(v, sha2_verifier("secret"));
    }

    #[test]
    fn sha2_verifier_matches_a_pbkdf2_test_vector() {
        // RFC 7914 section 11 (PBKDF2-HMAC-SHA256, P="passwd", S="salt", c=1).
        let v = sha2_verifier_with("passwd", b"salt", 1);
        assert!(
            v.ends_with("55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"),
            "{v}"
        );
    }

    #[test]
    fn malformed_verifiers_match_nothing() {
        for v in [
            "",
            "pbkdf2-sha256",
            "pbkdf2-sha256$x$00$00",
            "pbkdf2-sha256$0$00$00",
            "pbkdf2-sha256$1$zz$00",
            "md5$1$00$00",
            "pbkdf2-sha256$1$00$00$extra",
        ] {
            assert!(!check_sha2_verifier(v, ""), "{v}");
        }
    }

    #[test]
    fn plugin_names_round_trip() {
        for p in [AuthPlugin::NativePassword, AuthPlugin::CachingSha2Password] {
            assert_eq!(AuthPlugin::from_name(p.name()), Some(p));
        }
        assert_eq!(AuthPlugin::from_name("sha256_password"), None);
    }
}
