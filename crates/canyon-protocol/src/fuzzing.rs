//! Entry points for fuzzing: one function per decoder a client can reach, each
//! taking arbitrary bytes and promising never to panic on them.
//!
//! These are the bodies of the cargo-fuzz targets in `fuzz/fuzz_targets/` (run
//! for a bounded time by `scripts/fuzz.sh`, nightly only) and of the stable
//! replay test `tests/fuzz_replay.rs`, which feeds them the seed corpus in
//! `fuzz/corpus/<target>/` plus seeded random and mutated inputs on every
//! `cargo test`. Keeping the bodies here, not in the targets, means the replay
//! test exercises exactly what libFuzzer does, and the targets stay one line.
//!
//! A decoder may return any error it likes; what these functions forbid is a
//! panic (an out-of-bounds index, an overflow in a debug build, an `expect` that
//! client bytes can reach), because in the server a panic ends a connection task
//! on input the client chose. Each function therefore ignores results and only
//! drives the code.

use crate::{
    capability, decode_execute_params, decode_query, is_ssl_request, parameter_column,
    parse_change_user, parse_execute_header, parse_handshake_response, parse_long_data,
    verify_native_password, verify_sha2_scramble, write_text_row, Cursor, PacketIo, PreparedParams,
};
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// `max_allowed_packet` for [`packets`]: small, so a fuzzer's announced 16 MiB
/// packet is refused (as the server refuses it) instead of allocated.
const FUZZ_MAX_PACKET: usize = 1 << 20;

/// Cap on COM_STMT_SEND_LONG_DATA bytes per statement in [`stmt_execute`].
const FUZZ_MAX_LONG_DATA: usize = 1 << 20;

/// Runs a future that never waits: I/O on byte slices and `tokio::io::sink`
/// completes on the first poll. Cheaper per input than a runtime, and a future
/// that does wait is a bug in the harness, reported as a panic.
fn run_ready<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    match f.as_mut().poll(&mut cx) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("in-memory packet I/O never waits"),
    }
}

/// The packet decoder: `data` is the byte stream a client sends. Packets are
/// read with [`PacketIo::read_packet`] until it reports an error (end of input
/// included), each echoed back through the writer (chunking, flush). The first
/// byte chooses whether the sequence id restarts after every packet, as it does
/// between commands, or runs on, as within one exchange.
pub fn packets(data: &[u8]) {
    let Some((&mode, stream)) = data.split_first() else {
        return;
    };
    let mut io = PacketIo::new(stream, tokio::io::sink(), FUZZ_MAX_PACKET);
    let mut payload = Vec::new();
    run_ready(async {
        while io.read_packet(&mut payload).await.is_ok() {
            if mode & 1 != 0 {
                io.reset_sequence();
            }
            io.write_payload(&payload);
            if io.flush().await.is_err() {
                break;
            }
        }
    });
    let _ = io.take_traffic();
}

/// The connection phase: `data` as a HandshakeResponse41 / SSLRequest, and as
/// the body of COM_CHANGE_USER under a few capability sets; a parsed auth
/// response is then checked against a fixed scramble as the server would.
pub fn handshake(data: &[u8]) {
    let scramble = [0x2a; 20];
    let _ = is_ssl_request(data);
    if let Ok(r) = parse_handshake_response(data) {
        let _ = verify_native_password(&scramble, &r.auth_response, Some(&[7; 20]));
        let _ = verify_sha2_scramble(&scramble, &r.auth_response, &[7; 32]);
    }
    for caps in [
        capability::SERVER,
        capability::SERVER & !capability::SECURE_CONNECTION,
        capability::SERVER & !capability::PLUGIN_AUTH,
        0,
        u32::MAX,
    ] {
        if let Ok(c) = parse_change_user(data, caps) {
            let _ = verify_native_password(&scramble, &c.auth_response, None);
        }
    }
}

/// COM_STMT_EXECUTE's parameter block. `data` is laid out as
///
/// ```text
///  mode (1) [count (2) if mode & 0x80] [types if mode & 0x20]
///           [len (1), long data (len) if mode & 0x40] execute payload (rest)
/// ```
///
/// `mode & 0x1f` is the parameter count unless `mode & 0x80` reads a wider one
/// (its low 12 bits).
/// With `mode & 0x20` an earlier execute bound all-NULL parameters with types
/// taken from the input (two bytes per parameter, as long as bytes last), so the
/// statement remembers types; with `mode & 0x40` a COM_STMT_SEND_LONG_DATA
/// payload is applied first. The rest is COM_STMT_EXECUTE after its command
/// byte: [`parse_execute_header`], then [`decode_execute_params`] twice over the
/// same parameter block (the second time with whatever types the first bound),
/// and decoded values are written as a text row as `SELECT ?` would send them.
pub fn stmt_execute(data: &[u8]) {
    let mut c = Cursor::new(data);
    let Ok(mode) = c.u8() else {
        return;
    };
    let count = if mode & 0x80 != 0 {
        // Up to 4,095: wider blocks add run time per input, not new paths.
        match c.u16() {
            Ok(n) => n & 0x0fff,
            Err(_) => return,
        }
    } else {
        u16::from(mode & 0x1f)
    };
    let mut params = PreparedParams::new(count);
    let n = usize::from(count);

    if mode & 0x20 != 0 && n > 0 {
        // null bitmap (all NULL), new-params-bound flag, then the types.
        let mut bind = vec![0xff; n.div_ceil(8)];
        bind.push(1);
        for _ in 0..n {
            let code = c.u8().unwrap_or(0xfd);
            let flags = c.u8().unwrap_or(0);
            bind.extend_from_slice(&[code, flags]);
        }
        let _ = decode_execute_params(&mut Cursor::new(&bind), &mut params);
    }

    if mode & 0x40 != 0 {
        let len = c.u8().map(usize::from).unwrap_or(0);
        let take = len.min(c.remaining());
        if let Ok(body) = c.take(take) {
            if let Ok((_statement, param, bytes)) = parse_long_data(body) {
                params.add_long_data(param, bytes, FUZZ_MAX_LONG_DATA);
            }
        }
    }

    let payload = c.rest();
    let mut c = Cursor::new(payload);
    if parse_execute_header(&mut c).is_err() {
        return;
    }
    let block = c.rest();
    let mut columns = Vec::new();
    let mut out = Vec::new();
    for _ in 0..2 {
        if let Ok(values) = decode_execute_params(&mut Cursor::new(block), &mut params) {
            columns.resize_with(values.len(), parameter_column);
            out.clear();
            write_text_row(&mut out, &columns, &values);
        }
    }
}

/// COM_QUERY's statement text: `data` is the body after the command byte.
pub fn query_text(data: &[u8]) {
    let _ = decode_query(data);
}
