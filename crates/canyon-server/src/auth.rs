//! The authentication exchange, shared by the handshake and COM_CHANGE_USER.
//!
//! Given the client's first proof (computed with the connection's scramble and
//! the plugin the client chose), [`authenticate`] decides, possibly after more
//! round trips, whether the account accepts it:
//!
//! 1. The account's plugin decides (`canyon_sql::auth`). If the client used
//!    another one, the server sends AuthSwitchRequest for the account's plugin
//!    and reads a new proof.
//! 2. mysql_native_password: one check of the SHA1 proof.
//! 3. caching_sha2_password: the *fast path* checks the SHA-256 proof against
//!    `SHA256(SHA256(pw))` from [`Sha2Cache`] and answers AuthMoreData
//!    `fast_auth_success`. On a miss (first login since the server started, or a
//!    changed password) the server answers `perform_full_authentication`; the
//!    client then sends its password in clear text — which it does only over TLS
//!    or a Unix socket, and which the server accepts only there — the server
//!    checks it against the stored PBKDF2 verifier and caches the fast-path hash.
//!    Over plain TCP a client would instead ask for the server's RSA key to
//!    encrypt the password; Canyon has none, so such a client must use TLS for
//!    its first login (documented in docs/compatibility.md).
//!
//! Unknown accounts: the exchange runs as for a mysql_native_password account
//! (the default plugin) and fails the same way, so neither the answer nor the
//! packets exchanged tell whether a native account exists.

use crate::protocol::{self, capability, sha2_status, PacketIo, ReadError, Scramble};
use canyon_sql::{AuthInfo, AuthPlugin};
use parking_lot::Mutex;
use std::collections::HashMap;
use tokio::io::{AsyncRead, AsyncWrite};
use tracing::debug;

/// Entries the fast-path cache holds before it is cleared (a bound against a
/// client that loops over ALTER USER; each account needs one entry).
const SHA2_CACHE_LIMIT: usize = 100_000;

/// caching_sha2_password's in-memory cache: stored verifier → `SHA256(SHA256(pw))`.
///
/// Keyed by the verifier rather than the account: a new password gets a new
/// (salted) verifier, so a changed or dropped account can never hit an old
/// entry, and nothing has to invalidate the cache. Touched only at login.
#[derive(Default)]
pub(crate) struct Sha2Cache {
    map: Mutex<HashMap<String, [u8; 32]>>,
}

impl Sha2Cache {
    fn get(&self, verifier: &str) -> Option<[u8; 32]> {
        self.map.lock().get(verifier).copied()
    }

    fn insert(&self, verifier: &str, stage2: [u8; 32]) {
        let mut map = self.map.lock();
        if map.len() >= SHA2_CACHE_LIMIT {
            map.clear();
        }
        map.insert(verifier.to_string(), stage2);
    }
}

/// The client's first proof and what the connection knows about it.
pub(crate) struct Attempt<'a> {
    /// The account, or `None` for an unknown user.
    pub account: Option<AuthInfo>,
    /// The plugin the client computed `response` with (`None`: no
    /// CLIENT_PLUGIN_AUTH, i.e. mysql_native_password).
    pub client_plugin: Option<&'a str>,
    /// The client's proof.
    pub response: Vec<u8>,
    /// The connection's scramble.
    pub scramble: &'a Scramble,
    /// Negotiated capabilities.
    pub capabilities: u32,
    /// TLS or a Unix socket: a cleartext password may cross it.
    pub secure: bool,
}

/// How an exchange ended.
pub(crate) enum Verdict {
    /// The account accepts the client.
    Accepted,
    /// Wrong password, unknown user, or a proof that cannot be checked; the
    /// flag is MySQL's "using password" (whether the client sent any proof).
    Denied {
        /// Whether the client sent a non-empty proof.
        using_password: bool,
    },
    /// The connection broke mid-exchange (or sent an oversized packet).
    Broken(ReadError),
}

/// Runs the exchange; writes and flushes every packet it sends except the
/// final OK or ERR, which is the caller's.
pub(crate) async fn authenticate<R, W>(
    io: &mut PacketIo<R, W>,
    cache: &Sha2Cache,
    attempt: Attempt<'_>,
) -> Verdict
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let plugin = attempt
        .account
        .as_ref()
        .map_or(AuthPlugin::NativePassword, |a| a.plugin);
    let mut response = attempt.response;
    let client_plugin = attempt
        .client_plugin
        .filter(|p| !p.is_empty())
        .unwrap_or(protocol::NATIVE_PASSWORD_PLUGIN);
    if client_plugin != plugin.name() {
        if attempt.capabilities & capability::PLUGIN_AUTH == 0 {
            // A client without plugin support cannot be switched.
            return Verdict::Denied {
                using_password: !response.is_empty(),
            };
        }
        io.write_packet(|out| protocol::write_auth_switch(out, plugin.name(), attempt.scramble));
        if let Err(e) = exchange(io, &mut response).await {
            return Verdict::Broken(e);
        }
    }
    let using_password = !response.is_empty();
    let denied = Verdict::Denied { using_password };
    let Some(account) = attempt.account else {
        return denied;
    };
    if account.empty_password {
        return if response.is_empty() {
            Verdict::Accepted
        } else {
            denied
        };
    }
    match plugin {
        AuthPlugin::NativePassword => {
            if protocol::verify_native_password(
                attempt.scramble,
                &response,
                account.native_hash.as_ref(),
            ) {
                Verdict::Accepted
            } else {
                denied
            }
        }
        AuthPlugin::CachingSha2Password => {
            if response.is_empty() {
                return denied;
            }
            if let Some(stage2) = cache.get(&account.sha2_verifier) {
                if protocol::verify_sha2_scramble(attempt.scramble, &response, &stage2) {
                    io.write_packet(|out| {
                        protocol::write_auth_more_data(out, &[sha2_status::FAST_AUTH_SUCCESS])
                    });
                    return Verdict::Accepted;
                }
            }
            io.write_packet(|out| {
                protocol::write_auth_more_data(out, &[sha2_status::PERFORM_FULL_AUTHENTICATION])
            });
            let mut password = Vec::new();
            if let Err(e) = exchange(io, &mut password).await {
                return Verdict::Broken(e);
            }
            if !attempt.secure {
                // A request for the RSA public key, or an RSA-encrypted
                // password: neither is offered.
                debug!(
                    public_key_request = password == [sha2_status::REQUEST_PUBLIC_KEY],
                    "caching_sha2_password full authentication refused without TLS"
                );
                return denied;
            }
            if password.last() == Some(&0) {
                password.pop();
            }
            let Ok(password) = std::str::from_utf8(&password) else {
                return denied;
            };
            if canyon_sql::auth::check_sha2_verifier(&account.sha2_verifier, password) {
                cache.insert(
                    &account.sha2_verifier,
                    protocol::sha2_stage2(password.as_bytes()),
                );
                Verdict::Accepted
            } else {
                denied
            }
        }
    }
}

/// Flushes what is buffered and reads the client's next packet into `buf`.
async fn exchange<R, W>(io: &mut PacketIo<R, W>, buf: &mut Vec<u8>) -> Result<(), ReadError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    io.flush().await.map_err(ReadError::Io)?;
    io.read_packet(buf).await
}
