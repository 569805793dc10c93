//! Byte-level helpers: the little-endian integers, packed ("length-encoded")
//! integers and bounds-checked reads every event body is made of.
//!
//! MySQL's binary log is little-endian except in three places, all inside row
//! images and chosen so that `memcmp` orders the bytes like the values: packed
//! DECIMAL, the temporal types TIME2 / DATETIME2 / TIMESTAMP2, and BIT. Those
//! use the big-endian helpers here.

use crate::Error;

/// Appends a packed integer (MySQL's `net_store_length`, the protocol's
/// "length-encoded integer"): one byte below 251, else a marker byte 0xfc /
/// 0xfd / 0xfe followed by 2, 3 or 8 little-endian bytes.
pub(crate) fn put_packed(out: &mut Vec<u8>, v: u64) {
    if v < 251 {
        out.push(v as u8);
    } else if v < 1 << 16 {
        out.push(0xfc);
        out.extend_from_slice(&(v as u16).to_le_bytes());
    } else if v < 1 << 24 {
        out.push(0xfd);
        out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
    } else {
        out.push(0xfe);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// The number of bytes [`put_packed`] writes for `v`.
pub(crate) fn packed_len(v: u64) -> usize {
    if v < 251 {
        1
    } else if v < 1 << 16 {
        3
    } else if v < 1 << 24 {
        4
    } else {
        9
    }
}

/// Appends the low `n` bytes of `v`, little-endian.
pub(crate) fn put_le(out: &mut Vec<u8>, v: u64, n: usize) {
    debug_assert!(n <= 8);
    out.extend_from_slice(&v.to_le_bytes()[..n]);
}

/// Appends the low `n` bytes of `v`, big-endian.
pub(crate) fn put_be(out: &mut Vec<u8>, v: u64, n: usize) {
    debug_assert!(n <= 8);
    out.extend_from_slice(&v.to_be_bytes()[8 - n..]);
}

/// A bounds-checked cursor over an event body. Every read that would run past
/// the end fails with [`Error::Truncated`] naming what was being read, so a
/// short or corrupt event is an error value, never a panic.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Bytes not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    pub(crate) fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], Error> {
        if self.remaining() < n {
            return Err(Error::Truncated(what));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Everything not read yet.
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        let s = &self.buf[self.pos..];
        self.pos = self.buf.len();
        s
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8, Error> {
        Ok(self.bytes(1, what)?[0])
    }

    /// `n` bytes (at most 8), little-endian.
    pub(crate) fn le(&mut self, n: usize, what: &'static str) -> Result<u64, Error> {
        if n > 8 {
            return Err(Error::Malformed(format!("{what}: a {n}-byte integer")));
        }
        let s = self.bytes(n, what)?;
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(s);
        Ok(u64::from_le_bytes(b))
    }

    /// `n` bytes (at most 8), big-endian.
    pub(crate) fn be(&mut self, n: usize, what: &'static str) -> Result<u64, Error> {
        if n > 8 {
            return Err(Error::Malformed(format!("{what}: a {n}-byte integer")));
        }
        let s = self.bytes(n, what)?;
        let mut b = [0u8; 8];
        b[8 - n..].copy_from_slice(s);
        Ok(u64::from_be_bytes(b))
    }

    pub(crate) fn u16(&mut self, what: &'static str) -> Result<u16, Error> {
        Ok(self.le(2, what)? as u16)
    }

    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32, Error> {
        Ok(self.le(4, what)? as u32)
    }

    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64, Error> {
        self.le(8, what)
    }

    /// A packed integer (see [`put_packed`]). 0xfb (SQL NULL in result sets)
    /// and 0xff (an ERR packet's marker) never start one in an event.
    pub(crate) fn packed(&mut self, what: &'static str) -> Result<u64, Error> {
        match self.u8(what)? {
            v @ 0..=250 => Ok(u64::from(v)),
            0xfc => self.le(2, what),
            0xfd => self.le(3, what),
            0xfe => self.le(8, what),
            b => Err(Error::Malformed(format!(
                "{what}: 0x{b:02x} does not start a packed integer"
            ))),
        }
    }

    /// A packed length followed by that many bytes.
    pub(crate) fn packed_bytes(&mut self, what: &'static str) -> Result<&'a [u8], Error> {
        let n = self.packed(what)?;
        let n = usize::try_from(n).map_err(|_| Error::Truncated(what))?;
        self.bytes(n, what)
    }

    /// Bytes up to (not including) the next NUL, which is consumed.
    pub(crate) fn nul_terminated(&mut self, what: &'static str) -> Result<&'a [u8], Error> {
        let rest = &self.buf[self.pos..];
        let n = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or(Error::Truncated(what))?;
        self.pos += n + 1;
        Ok(&rest[..n])
    }
}

/// Text read from an event (a schema, table or file name): MySQL writes it in
/// the system character set, utf8mb3, so invalid UTF-8 is corrupt data.
pub(crate) fn text(bytes: &[u8], what: &'static str) -> Result<String, Error> {
    String::from_utf8(bytes.to_vec())
        .map_err(|_| Error::Malformed(format!("{what} is not valid UTF-8")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_integers_round_trip_at_every_width_boundary() {
        for v in [
            0u64,
            250,
            251,
            0xffff,
            0x1_0000,
            0xff_ffff,
            0x100_0000,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_packed(&mut out, v);
            assert_eq!(out.len(), packed_len(v), "{v}");
            let mut r = Reader::new(&out);
            assert_eq!(r.packed("v").expect("decodes"), v);
            assert!(r.is_empty());
        }
    }

    #[test]
    fn reads_past_the_end_are_errors() {
        let mut r = Reader::new(&[1, 2]);
        assert!(matches!(r.u32("x"), Err(Error::Truncated("x"))));
        assert!(matches!(
            Reader::new(&[0xfb]).packed("p"),
            Err(Error::Malformed(_))
        ));
        assert!(matches!(
            Reader::new(b"abc").nul_terminated("s"),
            Err(Error::Truncated("s"))
        ));
    }

    #[test]
    fn big_endian_helpers_write_the_low_bytes() {
        let mut out = Vec::new();
        put_be(&mut out, 0x0102_0304_0506, 3);
        assert_eq!(out, [4, 5, 6]);
        assert_eq!(Reader::new(&out).be(3, "x").expect("3 bytes"), 0x040506);
    }
}
