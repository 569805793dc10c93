//! The packet decoder: `data` is the byte stream a client sends.
//! The body is `canyon_protocol::fuzzing::packets`, which the stable replay test
//! (crates/canyon-protocol/tests/fuzz_replay.rs) runs too.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| canyon_protocol::fuzzing::packets(data));
