//! The connection phase: HandshakeResponse41, SSLRequest, COM_CHANGE_USER.
//! The body is `canyon_protocol::fuzzing::handshake`, which the stable replay test
//! (crates/canyon-protocol/tests/fuzz_replay.rs) runs too.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| canyon_protocol::fuzzing::handshake(data));
