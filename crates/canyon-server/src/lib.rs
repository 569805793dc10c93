//! The Canyon server: the MySQL wire protocol, connections and sessions around the
//! engine, and the `canyon` binary's startup.
//!
//! What this crate does: accept TCP connections, authenticate clients, turn
//! MySQL commands into calls on a [`canyon_sql::Session`], and turn results and
//! errors into MySQL packets. What it does not do: parse SQL, plan, lock, or
//! store — the engine (`canyon-sql` and below) does, with no network of its own.
//!
//! # One COM_QUERY, end to end
//!
//! `mysql -e "SELECT c FROM sbtest1 WHERE id = 5"` against a running server:
//!
//! 1. `server::serve` is waiting in `TcpListener::accept`; it takes a slot of
//!    `max_connections` (`ActiveGuard`) and spawns `connection::run` as the
//!    connection's one task, which takes a slot of
//!    `max_unauthenticated_connections` (`PreAuthGuard`) until the login
//!    succeeds and sets the `connect_timeout` deadline for steps 2 to 4.
//! 2. `connection::handshake` writes Protocol::HandshakeV10
//!    ([`protocol::write_handshake_v10`]) with a fresh 20-byte scramble and flushes.
//! 3. The client's HandshakeResponse41 arrives through
//!    [`protocol::PacketIo::read_packet`] (framing, sequence ids, the
//!    `max_allowed_packet` check) and is parsed by
//!    [`protocol::parse_handshake_response`]. (Had the server offered TLS and the
//!    client sent an SSLRequest, the socket would first be handed to rustls —
//!    [`tls`] — and the response read inside TLS.)
//! 4. `Engine::auth_info` gives the account's plugin and stored verifier; the
//!    `auth` module runs the exchange: a MySQL 8 client names
//!    caching_sha2_password, so for a mysql_native_password account the server
//!    answers with an AuthSwitchRequest ([`protocol::write_auth_switch`]) and
//!    checks the client's new proof with [`protocol::verify_native_password`].
//!    `Engine::session` opens the session; an OK packet ([`protocol::write_ok`])
//!    ends the connection phase.
//! 5. `Connection::command_loop` resets the sequence id and reads the next packet:
//!    `0x03` + SQL text. `Connection::dispatch` hands it to `Connection::com_query`.
//! 6. `com_query` calls `Session::execute(sql, multi_statements)`. Inside the
//!    engine the statement is parsed, bound against the catalog snapshot, planned
//!    (a primary-key point read here), and executed on an MVCC snapshot over the
//!    storage trait — see `canyon_sql`'s crate doc for those steps. A lock wait
//!    inside runs through [`blocking_hook`]; an autocommitted write's commit is
//!    written, and its durability awaited by the connection task before it
//!    answers.
//! 7. The result comes back as `QueryResult::Rows`. `Connection::write_result`
//!    appends the column count, one ColumnDefinition41 per column
//!    ([`protocol::write_column_definition`]), each row as length-encoded text
//!    ([`protocol::write_text_row`]), and the closing EOF — or, with
//!    CLIENT_DEPRECATE_EOF, an OK packet with a 0xFE header
//!    ([`protocol::write_end_of_rows`]) carrying SERVER_STATUS_AUTOCOMMIT.
//!    An error instead becomes one ERR packet via [`protocol::mysql_error`], the
//!    only place errors get MySQL numbers.
//! 8. The whole reply sits in one buffer; `PacketIo::flush` writes it with one
//!    `write` call, and the loop waits for the next command.
//! 9. When the client quits or vanishes, the task ends and drops the `Session`,
//!    which rolls back anything still open.
//!
//! Prepared statements take the same path with `com_stmt_prepare` and
//! `com_stmt_execute`: parameters are decoded by
//! [`protocol::decode_execute_params`] and rows written by
//! [`protocol::write_binary_row`].
//!
//! # Modules
//!
//! - [`protocol`]: bytes only — packets, handshake, result sets, errors (the
//!   `canyon-protocol` crate, re-exported).
//! - `connection`: one connection's state machine and command dispatch.
//! - `auth`: the password exchange of the login and COM_CHANGE_USER, with
//!   caching_sha2_password's in-memory cache.
//! - [`tls`]: the certificate, and the switch to TLS after an SSLRequest.
//! - `server`: the accept loop, connection limits, shutdown.
//! - [`config`]: the configuration struct and its layers.
//! - `startup`: opening storage and the engine, the first root account.
//! - [`memory`]: `memory_budget_bytes` divided among the caches.
//! - [`metrics`]: `GET /metrics` for Prometheus, when `metrics_address` is set.

mod auth;
pub mod backup;
pub mod config;
mod connection;
pub mod memory;
pub mod metrics;
mod replica;
mod server;
mod startup;
pub mod tls;

/// The wire format, a crate of its own (`canyon-protocol`); re-exported under its
/// old path so `crate::protocol::..` keeps reading as one layer of this server.
pub use canyon_protocol as protocol;

pub use config::{Config, ConfigError, DurabilityMode, Overrides};
pub use server::{
    blocking_hook, handshake_version, mariadb_server_version, serve, server_version, ServerOptions,
    DRAIN_TIMEOUT,
};
pub use startup::{engine_config, ensure_root_account, open_engine, RootPassword};
