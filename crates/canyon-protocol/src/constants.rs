//! Numbers of the MySQL Client/Server Protocol: capability flags, status flags,
//! command bytes, packet headers. Names follow the MySQL source (`include/mysql_com.h`)
//! so they can be grepped side by side with the manual.

/// Capability flags (`CLIENT_*`), exchanged in the handshake.
pub mod capability {
    /// New, more secure passwords (always set by modern clients).
    pub const LONG_PASSWORD: u32 = 1;
    /// Affected rows are "found" (matched) rows, not changed rows.
    pub const FOUND_ROWS: u32 = 1 << 1;
    /// Longer column flags in column definitions.
    pub const LONG_FLAG: u32 = 1 << 2;
    /// The handshake response may name a database.
    pub const CONNECT_WITH_DB: u32 = 1 << 3;
    /// LOAD DATA LOCAL: the client will send a file when the server asks
    /// (the LOCAL INFILE request, 0xFB + file name). Offered always, as MySQL
    /// does; the server's `local_infile` setting decides (3948 when off).
    pub const LOCAL_FILES: u32 = 1 << 7;
    /// The 4.1 protocol (required; Canyon rejects older clients).
    pub const PROTOCOL_41: u32 = 1 << 9;
    /// TLS: advertised when the server has a certificate; a client that sets it
    /// sends a short SSLRequest and starts TLS before its real response.
    pub const SSL: u32 = 1 << 11;
    /// The client knows about transactions (status flags in OK packets).
    pub const TRANSACTIONS: u32 = 1 << 13;
    /// 4.1 authentication (length-prefixed auth response).
    pub const SECURE_CONNECTION: u32 = 1 << 15;
    /// Several statements in one COM_QUERY.
    pub const MULTI_STATEMENTS: u32 = 1 << 16;
    /// Several result sets for one COM_QUERY.
    pub const MULTI_RESULTS: u32 = 1 << 17;
    /// Several result sets for one COM_STMT_EXECUTE.
    pub const PS_MULTI_RESULTS: u32 = 1 << 18;
    /// Authentication plugins are named in the handshake.
    pub const PLUGIN_AUTH: u32 = 1 << 19;
    /// Connection attributes follow the handshake response.
    pub const CONNECT_ATTRS: u32 = 1 << 20;
    /// The auth response is a length-encoded string (may be longer than 255 bytes).
    pub const PLUGIN_AUTH_LENENC_CLIENT_DATA: u32 = 1 << 21;
    /// Session state tracking in OK packets; not advertised.
    pub const SESSION_TRACK: u32 = 1 << 23;
    /// EOF packets are replaced by OK packets with a 0xFE header.
    pub const DEPRECATE_EOF: u32 = 1 << 24;
    /// Query attributes before COM_QUERY text; not advertised.
    pub const QUERY_ATTRIBUTES: u32 = 1 << 27;

    /// What Canyon offers. The session uses `offered & client's`.
    pub const SERVER: u32 = LONG_PASSWORD
        | FOUND_ROWS
        | LONG_FLAG
        | CONNECT_WITH_DB
        | LOCAL_FILES
        | PROTOCOL_41
        | TRANSACTIONS
        | SECURE_CONNECTION
        | MULTI_STATEMENTS
        | MULTI_RESULTS
        | PS_MULTI_RESULTS
        | PLUGIN_AUTH
        | CONNECT_ATTRS
        | PLUGIN_AUTH_LENENC_CLIENT_DATA
        | DEPRECATE_EOF;
}

/// Server status flags (`SERVER_STATUS_*`) in OK and EOF packets.
pub mod status {
    /// A transaction is open.
    pub const IN_TRANS: u16 = 1;
    /// Autocommit is on.
    pub const AUTOCOMMIT: u16 = 1 << 1;
    /// Another result follows this one (multi-statement COM_QUERY).
    pub const MORE_RESULTS_EXISTS: u16 = 1 << 3;
}

/// Command bytes (`COM_*`): the first byte of every packet a client sends
/// after the handshake.
pub mod command {
    /// Close the connection; no reply.
    pub const QUIT: u8 = 0x01;
    /// Change the current database.
    pub const INIT_DB: u8 = 0x02;
    /// Run SQL text.
    pub const QUERY: u8 = 0x03;
    /// List a table's columns (deprecated, still used by the `mysql` client).
    pub const FIELD_LIST: u8 = 0x04;
    /// A human-readable status line.
    pub const STATISTICS: u8 = 0x09;
    /// Is the server alive?
    pub const PING: u8 = 0x0e;
    /// Prepare a statement.
    pub const STMT_PREPARE: u8 = 0x16;
    /// Execute a prepared statement.
    pub const STMT_EXECUTE: u8 = 0x17;
    /// Send a parameter's data in pieces; no reply.
    pub const STMT_SEND_LONG_DATA: u8 = 0x18;
    /// Deallocate a prepared statement; no reply.
    pub const STMT_CLOSE: u8 = 0x19;
    /// Clear a statement's long data.
    pub const STMT_RESET: u8 = 0x1a;
    /// Turn multi-statements on or off.
    pub const SET_OPTION: u8 = 0x1b;
    /// Reset the session (roll back, forget statements and variables).
    pub const RESET_CONNECTION: u8 = 0x1f;
    /// COM_CHANGE_USER
    pub const CHANGE_USER: u8 = 0x11;
    /// A replica asks for the binary log from a file and position.
    pub const BINLOG_DUMP: u8 = 0x12;
    /// A replica announces itself.
    pub const REGISTER_SLAVE: u8 = 0x15;
    /// A replica asks for the binary log from a GTID set.
    pub const BINLOG_DUMP_GTID: u8 = 0x1e;
}

/// First bytes of server packets.
pub mod header {
    /// OK packet.
    pub const OK: u8 = 0x00;
    /// EOF packet, the OK packet that replaces it under DEPRECATE_EOF, and
    /// AuthSwitchRequest during the handshake.
    pub const EOF: u8 = 0xfe;
    /// ERR packet.
    pub const ERR: u8 = 0xff;
    /// A NULL column value in a text row.
    pub const NULL_VALUE: u8 = 0xfb;
}

/// The authentication plugin named in the initial handshake (the default for
/// accounts; see `canyon_sql::auth`).
pub const NATIVE_PASSWORD_PLUGIN: &str = "mysql_native_password";

/// caching_sha2_password's status bytes, sent in an AuthMoreData packet.
pub mod sha2_status {
    /// The scramble matched the cached hash: an OK packet follows.
    pub const FAST_AUTH_SUCCESS: u8 = 0x03;
    /// No (matching) cached hash: the client must send its password, which it
    /// does in clear text only over a secure transport.
    pub const PERFORM_FULL_AUTHENTICATION: u8 = 0x04;
    /// The client's request for the server's RSA public key (not offered).
    pub const REQUEST_PUBLIC_KEY: u8 = 0x02;
}

/// utf8mb4_general_ci, the collation announced in the handshake.
pub const HANDSHAKE_CHARSET: u8 = 45;

/// `COM_SET_OPTION` values.
pub mod set_option {
    /// MYSQL_OPTION_MULTI_STATEMENTS_ON
    pub const MULTI_STATEMENTS_ON: u16 = 0;
    /// MYSQL_OPTION_MULTI_STATEMENTS_OFF
    pub const MULTI_STATEMENTS_OFF: u16 = 1;
}
