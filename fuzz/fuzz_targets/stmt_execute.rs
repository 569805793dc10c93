//! COM_STMT_EXECUTE's header and parameter block, and COM_STMT_SEND_LONG_DATA.
//! The body is `canyon_protocol::fuzzing::stmt_execute`, which the stable replay test
//! (crates/canyon-protocol/tests/fuzz_replay.rs) runs too.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| canyon_protocol::fuzzing::stmt_execute(data));
