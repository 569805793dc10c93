//! The MySQL Client/Server Protocol, as bytes: framing, the connection phase,
//! command payloads, result sets, and the error mapping.
//!
//! What this layer does: turn bytes into requests and results into bytes, with
//! every read bounds-checked (no client input can panic the server) and every
//! response batched into one buffer per command.
//!
//! What it does not do: it holds no session state beyond what the protocol itself
//! defines (sequence ids, a prepared statement's parameter types and long data),
//! never calls the engine, and never decides *what* to answer — that is
//! `connection.rs`. It knows nothing of sockets beyond `AsyncRead`/`AsyncWrite`,
//! which is what lets its tests run on byte slices.
//!
//! Reading order: `packet` (framing) -> `codec` (basic types) -> `handshake`
//! (connection phase) -> `query_text` (COM_QUERY's statement text, `_binary`
//! literals of raw bytes, other client character sets) -> `convert` (string
//! parameters and result values in a non-UTF-8 session) -> `text` (OK/ERR/EOF, column definitions, text rows) ->
//! `binary` (prepared statements) -> `errors` (the Error -> errno mapping).
//! The reference is the MySQL manual's "Client/Server Protocol" chapter.
//!
//! # Why a crate of its own
//!
//! The wire format is a layer of its own, below the server (which owns sockets,
//! sessions and authentication state) and above the engine (whose `Value` and
//! `Column` it encodes); as a crate, nothing from the server can leak into it.
//! And it must build without canyon-server's dependencies: the fuzz targets in
//! `fuzz/` link this crate with sanitizer instrumentation on nightly, and pulling
//! in canyon-server would mean a second RocksDB C++ build (15 minutes on two
//! cores) for code the decoders never touch. canyon-server re-exports it as
//! `canyon_server::protocol`.
//!
//! [`fuzzing`] holds one never-panics entry point per client-reachable decoder:
//! the bodies of the cargo-fuzz targets and of the `fuzz_replay` test.

mod binary;
mod codec;
mod constants;
pub mod convert;
mod errors;
pub mod fuzzing;
mod handshake;
mod packet;
mod query_text;
mod text;

pub use binary::{
    decode_execute_params, parameter_column, parse_execute_header, parse_long_data,
    write_binary_row, write_prepare_ok, ExecuteHeader, ParamType, PreparedParams, EXECUTE_COMMAND,
};
pub use codec::{put_lenenc_int, Cursor, Truncated};
pub use constants::{
    capability, command, header, set_option, sha2_status, status, HANDSHAKE_CHARSET,
    NATIVE_PASSWORD_PLUGIN,
};
pub use errors::{empty_query, mysql_error, MysqlError};
pub use handshake::{
    is_ssl_request, new_scramble, parse_change_user, parse_handshake_response, sha2_stage2,
    verify_native_password, verify_sha2_scramble, write_auth_more_data, write_auth_switch,
    write_handshake_v10, ChangeUser, HandshakeError, HandshakeResponse, Scramble,
};
pub use packet::{PacketIo, ReadError, MAX_CHUNK};
pub use query_text::{decode_query, decode_query_in};
pub use text::{
    format_date, format_datetime, format_double, format_float, write_column_definition,
    write_column_definition_as, write_end_of_rows, write_eof, write_err, write_ok, write_text_row,
    write_text_value, OkPacket,
};

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator, so a failure reproduces exactly.
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn bytes(&mut self, max_len: usize) -> Vec<u8> {
            let len = (self.next() as usize) % (max_len + 1);
            (0..len).map(|_| self.next() as u8).collect()
        }
    }

    /// Random payloads through every decoder a client can reach: each returns a
    /// value or an error, and none panics.
    #[test]
    fn decoders_survive_random_input() {
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        for round in 0..20_000 {
            let junk = rng.bytes(96);
            let _ = parse_handshake_response(&junk);
            let _ = parse_change_user(&junk, capability::SERVER);
            let _ = parse_long_data(&junk);
            let _ = decode_query(&junk);
            let mut c = Cursor::new(&junk);
            if parse_execute_header(&mut c).is_ok() {
                let mut params = PreparedParams::new((round % 12) as u16);
                let _ = decode_execute_params(&mut c, &mut params);
                // Re-execution with remembered types, on fresh junk.
                let more = rng.bytes(64);
                let _ = decode_execute_params(&mut Cursor::new(&more), &mut params);
            }
            // Handshake responses that start valid and then turn to noise.
            let mut framed = (capability::SERVER | (rng.next() as u32))
                .to_le_bytes()
                .to_vec();
            framed.extend_from_slice(&junk);
            let _ = parse_handshake_response(&framed);
        }
    }

    /// Every parameter type code, with random bytes after it.
    #[test]
    fn every_parameter_type_code_is_handled() {
        let mut rng = XorShift(42);
        for code in 0..=255u8 {
            for unsigned in [false, true] {
                for _ in 0..50 {
                    let mut block = vec![0u8, 1, code, if unsigned { 0x80 } else { 0 }];
                    block.extend(rng.bytes(24));
                    let mut params = PreparedParams::new(1);
                    let _ = decode_execute_params(&mut Cursor::new(&block), &mut params);
                }
            }
        }
    }
}
