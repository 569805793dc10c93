//! COM_QUERY's statement text (`_binary` literals of raw bytes).
//! The body is `canyon_protocol::fuzzing::query_text`, which the stable replay test
//! (crates/canyon-protocol/tests/fuzz_replay.rs) runs too.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| canyon_protocol::fuzzing::query_text(data));
