//! Packet framing: every message is one or more packets of
//! `int<3> payload_length, int<1> sequence_id, payload`.
//!
//! ```text
//!  +---------+-----+---------------------------+
//!  | len (3) | seq | payload (len bytes)        |   len < 0xFFFFFF: last packet
//!  +---------+-----+---------------------------+
//!  a payload of 0xFFFFFF bytes or more is sent as chunks of exactly 0xFFFFFF,
//!  followed by one shorter chunk (possibly empty): the reader concatenates them.
//! ```
//!
//! Sequence ids count up by one per packet (wrapping at 255) across both
//! directions of one exchange and restart at 0 with every command. A reader that
//! sees an unexpected sequence id treats the stream as broken.
//!
//! Reading enforces `max_allowed_packet` chunk by chunk, before the chunk's bytes
//! are allocated, and reads into reserved but untouched capacity, so an attacker
//! announcing a 16 MiB packet and sending nothing costs address space, not memory.
//!
//! Writing is batched: packets are appended to one buffer and written to the
//! socket by [`PacketIo::flush`], so a whole result set goes out in one (or few)
//! `write` calls.

use std::io;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// The largest payload one packet carries; a longer payload continues in the next.
pub const MAX_CHUNK: usize = 0xff_ffff;

/// Buffered bytes after which the output buffer is written out even in the middle
/// of a result set, to bound the memory one connection holds.
const FLUSH_THRESHOLD: usize = 4 << 20;

/// An output buffer grown beyond this is released after a flush.
const KEEP_CAPACITY: usize = 1 << 20;

/// Why a packet could not be read. All of them end the connection.
#[derive(Debug)]
pub enum ReadError {
    /// The client closed the connection between packets.
    Closed,
    /// The connection ended inside a packet.
    Truncated,
    /// The payload exceeds `max_allowed_packet` (the client gets ERR 1153).
    TooLarge,
    /// A sequence id other than the expected one.
    OutOfOrder {
        /// What the server expected.
        expected: u8,
        /// What arrived.
        got: u8,
    },
    /// The socket failed.
    Io(io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Closed => write!(f, "connection closed by client"),
            ReadError::Truncated => write!(f, "connection closed inside a packet"),
            ReadError::TooLarge => write!(f, "packet larger than max_allowed_packet"),
            ReadError::OutOfOrder { expected, got } => {
                write!(f, "packets out of order (expected {expected}, got {got})")
            }
            ReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// Reads and writes packets on one connection and keeps its sequence id.
pub struct PacketIo<R, W> {
    reader: BufReader<R>,
    writer: W,
    out: Vec<u8>,
    seq: u8,
    max_allowed_packet: usize,
    /// Bytes read and written since the last [`PacketIo::take_traffic`]
    /// (Bytes_received / Bytes_sent).
    traffic: (u64, u64),
    /// Runs the join of a many-chunk payload (see [`PacketIo::set_offload`]).
    offload: Option<fn(&mut dyn FnMut())>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> PacketIo<R, W> {
    /// Wraps the two halves of a connection.
    pub fn new(reader: R, writer: W, max_allowed_packet: usize) -> Self {
        PacketIo {
            reader: BufReader::with_capacity(16 * 1024, reader),
            writer,
            out: Vec::with_capacity(16 * 1024),
            seq: 0,
            max_allowed_packet,
            traffic: (0, 0),
            offload: None,
        }
    }

    /// Bytes read and written since the last call (headers included).
    pub fn take_traffic(&mut self) -> (u64, u64) {
        std::mem::take(&mut self.traffic)
    }

    /// Starts a new exchange: the next packet read must have sequence id 0.
    pub fn reset_sequence(&mut self) {
        self.seq = 0;
    }

    /// Reads one logical packet (reassembling split payloads) into `payload`,
    /// replacing its contents.
    ///
    /// A payload of 16 MiB or more arrives as several chunks. Each is read
    /// into its own buffer, and they are joined once the last has arrived,
    /// through the offload hook when one is set ([`PacketIo::set_offload`]):
    /// growing one buffer chunk by chunk would copy up to 64 MiB into fresh
    /// pages in one synchronous step on the connection-serving worker (60 ms
    /// measured on the benchmark machine, stalling that worker's other
    /// connections), while a read into a buffer's spare capacity touches its
    /// pages a socket read at a time.
    pub async fn read_packet(&mut self, payload: &mut Vec<u8>) -> Result<(), ReadError> {
        payload.clear();
        // Chunks after the first; empty (no allocation) for all but huge packets.
        let mut rest: Vec<Vec<u8>> = Vec::new();
        let mut total = 0usize;
        let mut first = true;
        loop {
            let mut header = [0u8; 4];
            match read_exact_or_eof(&mut self.reader, &mut header).await {
                Ok(0) if first => return Err(ReadError::Closed),
                Ok(4) => {}
                Ok(_) => return Err(ReadError::Truncated),
                Err(e) => return Err(ReadError::Io(e)),
            }
            let len =
                usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
            let seq = header[3];
            if seq != self.seq {
                return Err(ReadError::OutOfOrder {
                    expected: self.seq,
                    got: seq,
                });
            }
            self.seq = self.seq.wrapping_add(1);
            if total + len > self.max_allowed_packet {
                return Err(ReadError::TooLarge);
            }
            total += len;
            self.traffic.0 += 4 + len as u64;
            if first {
                read_chunk(&mut self.reader, payload, len).await?;
            } else {
                let mut chunk = Vec::new();
                read_chunk(&mut self.reader, &mut chunk, len).await?;
                rest.push(chunk);
            }
            first = false;
            if len < MAX_CHUNK {
                break;
            }
        }
        if !rest.is_empty() {
            let mut join = || {
                payload.reserve_exact(total - payload.len());
                for chunk in rest.drain(..) {
                    payload.extend_from_slice(&chunk);
                }
            };
            match self.offload {
                Some(hook) => hook(&mut join),
                None => join(),
            }
        }
        debug_assert_eq!(payload.len(), total);
        Ok(())
    }

    /// Reads what bytes the connection has (at least one, waiting for
    /// them) and appends them to `buf`, unframed; `Ok(0)` when the peer
    /// closed. For a side channel read while the connection streams: a
    /// semi-synchronous replica's acknowledgements during a binlog dump,
    /// whose framing the caller parses. Cancel-safe (a read that did not
    /// complete consumed nothing), so it can race other futures.
    pub async fn read_some(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        let mut chunk = [0u8; 512];
        let n = self.reader.read(&mut chunk).await?;
        buf.extend_from_slice(&chunk[..n]);
        self.traffic.0 += n as u64;
        Ok(n)
    }

    /// Where [`PacketIo::read_packet`] joins the chunks of a payload of
    /// 16 MiB or more: the server passes its blocking hook, which moves the
    /// copy off the connection-serving worker.
    pub fn set_offload(&mut self, hook: fn(&mut dyn FnMut())) {
        self.offload = Some(hook);
    }

    /// Appends one packet whose payload `build` writes into the buffer it is given
    /// (which may already hold earlier packets: `build` only appends).
    pub fn write_packet(&mut self, build: impl FnOnce(&mut Vec<u8>)) {
        let start = self.out.len();
        self.out.extend_from_slice(&[0, 0, 0, 0]);
        build(&mut self.out);
        let len = self.out.len() - start - 4;
        if len < MAX_CHUNK {
            self.out[start..start + 3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
            self.out[start + 3] = self.seq;
            self.seq = self.seq.wrapping_add(1);
            return;
        }
        // Rare slow path: split the payload into 0xFFFFFF-byte chunks.
        let payload = self.out.split_off(start + 4);
        self.out.truncate(start);
        self.push_chunks(&payload);
    }

    /// Appends one packet with the given payload.
    pub fn write_payload(&mut self, payload: &[u8]) {
        if payload.len() < MAX_CHUNK {
            self.write_packet(|out| out.extend_from_slice(payload));
        } else {
            self.push_chunks(payload);
        }
    }

    fn push_chunks(&mut self, payload: &[u8]) {
        let mut rest = payload;
        loop {
            let n = rest.len().min(MAX_CHUNK);
            self.out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
            self.out.push(self.seq);
            self.seq = self.seq.wrapping_add(1);
            self.out.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            if n < MAX_CHUNK {
                return;
            }
        }
    }

    /// Writes the buffer out if it has grown past the threshold (call between rows).
    pub async fn flush_if_large(&mut self) -> io::Result<()> {
        if self.out.len() >= FLUSH_THRESHOLD {
            self.flush().await?;
        }
        Ok(())
    }

    /// Writes every buffered packet to the socket.
    pub async fn flush(&mut self) -> io::Result<()> {
        if !self.out.is_empty() {
            self.traffic.1 += self.out.len() as u64;
            self.writer.write_all(&self.out).await?;
            self.out.clear();
            if self.out.capacity() > KEEP_CAPACITY {
                self.out = Vec::with_capacity(16 * 1024);
            }
        }
        self.writer.flush().await
    }

    /// The current sequence id (the one the next packet gets).
    pub fn sequence(&self) -> u8 {
        self.seq
    }

    /// Continues an exchange begun on another `PacketIo` (the connection phase
    /// goes on over TLS with the sequence where the SSLRequest left it).
    pub fn set_sequence(&mut self, seq: u8) {
        self.seq = seq;
    }

    /// Takes the connection apart to change its transport (STARTTLS-style
    /// upgrade): the bytes already read from the socket but not yet consumed —
    /// a client starts its TLS handshake right after the SSLRequest, so part of
    /// it may sit in the read buffer — then the two halves. Unflushed output is
    /// dropped; callers flush first.
    pub fn into_parts(self) -> (Vec<u8>, R, W) {
        debug_assert!(self.out.is_empty(), "output left unflushed");
        let buffered = self.reader.buffer().to_vec();
        (buffered, self.reader.into_inner(), self.writer)
    }

    /// Shuts the write half down (best effort).
    pub async fn shutdown(&mut self) {
        let _ = self.writer.shutdown().await;
    }

    /// The maximum payload accepted from the client.
    pub fn max_allowed_packet(&self) -> usize {
        self.max_allowed_packet
    }

    /// The write half, for tests.
    #[cfg(test)]
    pub fn writer(&self) -> &W {
        &self.writer
    }
}

/// Fills `buf` completely, or returns how many bytes came before end of stream.
/// Appends exactly `len` bytes from `r` to `buf`, reading into its spare
/// capacity: no zero-fill of bytes the socket overwrites anyway (16 MiB of
/// memset per chunk), and pages become resident only as bytes arrive, so a
/// client announcing 16 MiB and sending nothing costs address space only.
async fn read_chunk<R: AsyncRead + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
    len: usize,
) -> Result<(), ReadError> {
    buf.reserve(len);
    let end = buf.len() + len;
    let mut chunk = r.take(len as u64);
    while buf.len() < end {
        match chunk.read_buf(buf).await {
            Ok(0) => return Err(ReadError::Truncated),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ReadError::Io(e)),
        }
    }
    Ok(())
}

async fn read_exact_or_eof<R: AsyncRead + Unpin>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]).await {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(input: &[u8], max: usize) -> PacketIo<&[u8], Vec<u8>> {
        PacketIo::new(input, Vec::new(), max)
    }

    fn frame(seq: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = (payload.len() as u32).to_le_bytes()[..3].to_vec();
        v.push(seq);
        v.extend_from_slice(payload);
        v
    }

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
            .block_on(f)
    }

    #[test]
    fn reads_simple_packet_and_checks_sequence() {
        let mut input = frame(0, b"\x03select 1");
        input.extend(frame(1, b"x"));
        input.extend(frame(5, b"y"));
        let mut p = io(&input, 1024);
        let mut buf = Vec::new();
        block_on(async {
            p.read_packet(&mut buf).await.expect("packet");
            assert_eq!(buf, b"\x03select 1");
            p.read_packet(&mut buf).await.expect("packet");
            assert_eq!(buf, b"x");
            let err = p.read_packet(&mut buf).await.expect_err("out of order");
            assert!(matches!(
                err,
                ReadError::OutOfOrder {
                    expected: 2,
                    got: 5
                }
            ));
        });
    }

    #[test]
    fn clean_close_vs_truncated() {
        let mut buf = Vec::new();
        block_on(async {
            assert!(matches!(
                io(&[], 1024).read_packet(&mut buf).await,
                Err(ReadError::Closed)
            ));
            assert!(matches!(
                io(&[5, 0], 1024).read_packet(&mut buf).await,
                Err(ReadError::Truncated)
            ));
            assert!(matches!(
                io(&[5, 0, 0, 0, b'a', b'b'], 1024)
                    .read_packet(&mut buf)
                    .await,
                Err(ReadError::Truncated)
            ));
            // A split payload whose continuation never comes.
            let mut input = frame(0, &vec![7u8; MAX_CHUNK]);
            input.truncate(input.len() - 1);
            assert!(matches!(
                io(&input, usize::MAX).read_packet(&mut buf).await,
                Err(ReadError::Truncated)
            ));
        });
    }

    #[test]
    fn oversized_packet_is_rejected_before_reading_it() {
        // Only the header is present: the reader must refuse without waiting for
        // (or allocating) the announced 16 MiB.
        let input = [0xff, 0xff, 0xff, 0];
        let mut buf = Vec::new();
        block_on(async {
            let err = io(&input, 1024)
                .read_packet(&mut buf)
                .await
                .expect_err("too large");
            assert!(matches!(err, ReadError::TooLarge));
            assert!(buf.capacity() < 1024 * 1024);
            // Exactly at the limit is fine.
            let input = frame(0, &[1u8; 100]);
            io(&input, 100)
                .read_packet(&mut buf)
                .await
                .expect("at limit");
            assert_eq!(buf.len(), 100);
            let err = io(&input, 99)
                .read_packet(&mut buf)
                .await
                .expect_err("over");
            assert!(matches!(err, ReadError::TooLarge));
        });
    }

    fn write_and_read_back(len: usize) {
        let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let mut w = io(&[], 0);
        w.write_payload(&payload);
        block_on(w.flush()).expect("flush");
        let wire = w.writer().clone();
        let chunks = len / MAX_CHUNK + 1;
        assert_eq!(wire.len(), len + 4 * chunks);
        // Headers: full chunks then the short (maybe empty) one, sequence ids 0..
        let mut pos = 0;
        for i in 0..chunks {
            let n = u32::from_le_bytes([wire[pos], wire[pos + 1], wire[pos + 2], 0]) as usize;
            assert_eq!(wire[pos + 3], i as u8);
            if i + 1 < chunks {
                assert_eq!(n, MAX_CHUNK);
            } else {
                assert_eq!(n, len % MAX_CHUNK);
            }
            pos += 4 + n;
        }
        let mut r = io(&wire, usize::MAX);
        let mut buf = Vec::new();
        block_on(r.read_packet(&mut buf)).expect("read back");
        assert_eq!(buf, payload);
        assert_eq!(r.sequence(), chunks as u8);

        // With an offload hook, the chunks are joined inside it (and only a
        // payload of several chunks needs the join).
        thread_local! {
            static OFFLOADS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
        }
        fn hook(f: &mut dyn FnMut()) {
            OFFLOADS.with(|n| n.set(n.get() + 1));
            f();
        }
        OFFLOADS.with(|n| n.set(0));
        let mut r = io(&wire, usize::MAX);
        r.set_offload(hook);
        let mut buf = vec![7u8; 3]; // replaced, not appended to
        block_on(r.read_packet(&mut buf)).expect("read back with an offload hook");
        assert_eq!(buf, payload);
        assert_eq!(OFFLOADS.with(|n| n.get()), usize::from(chunks > 1));
    }

    #[test]
    fn payload_of_exactly_max_chunk_gets_an_empty_trailer() {
        write_and_read_back(MAX_CHUNK);
    }

    #[test]
    fn large_payloads_split_and_reassemble() {
        write_and_read_back(MAX_CHUNK - 1);
        write_and_read_back(MAX_CHUNK + 1);
        write_and_read_back(2 * MAX_CHUNK + 10);
    }

    #[test]
    fn write_packet_builder_splits_too() {
        let mut w = io(&[], 0);
        w.write_packet(|out| out.extend_from_slice(b"ok"));
        w.write_packet(|out| out.resize(out.len() + MAX_CHUNK + 3, 9));
        block_on(w.flush()).expect("flush");
        let wire = w.writer().clone();
        assert_eq!(&wire[..6], &[2, 0, 0, 0, b'o', b'k']);
        assert_eq!(&wire[6..10], &[0xff, 0xff, 0xff, 1]);
        let tail = 10 + MAX_CHUNK;
        assert_eq!(&wire[tail..tail + 4], &[3, 0, 0, 2]);
        assert_eq!(wire.len(), tail + 4 + 3);
    }

    #[test]
    fn max_allowed_counts_the_reassembled_payload() {
        let mut input = frame(0, &vec![1u8; MAX_CHUNK]);
        input.extend(frame(1, &[2u8; 10]));
        let mut buf = Vec::new();
        block_on(async {
            let err = io(&input, MAX_CHUNK + 5)
                .read_packet(&mut buf)
                .await
                .expect_err("too large");
            assert!(matches!(err, ReadError::TooLarge));
            io(&input, MAX_CHUNK + 10)
                .read_packet(&mut buf)
                .await
                .expect("fits");
            assert_eq!(buf.len(), MAX_CHUNK + 10);
        });
    }
}
