//! The protocol's basic data types, read and written bounds-checked.
//!
//! MySQL's manual ("Basic Data Types") defines fixed-length little-endian integers
//! (`int<1>` .. `int<8>`), length-encoded integers (`int<lenenc>`), and strings that
//! are NUL-terminated (`string<NUL>`), length-encoded (`string<lenenc>`) or run to the
//! end of the packet (`string<EOF>`).
//!
//! Every read goes through [`Cursor`], which returns [`Truncated`] instead of
//! indexing past the end: no client input can panic the server.

/// A read ran past the end of the packet, or a length-encoded integer had the
/// invalid first byte 0xFF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truncated;

impl From<Truncated> for canyon_common::Error {
    fn from(_: Truncated) -> Self {
        canyon_common::Error::MalformedPacket("truncated packet".to_string())
    }
}

/// A bounds-checked reader over one packet's payload.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// Starts reading at the first byte of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Whether everything has been read.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Truncated> {
        let end = self.pos.checked_add(n).ok_or(Truncated)?;
        let bytes = self.buf.get(self.pos..end).ok_or(Truncated)?;
        self.pos = end;
        Ok(bytes)
    }

    /// Everything left (`string<EOF>`).
    pub fn rest(&mut self) -> &'a [u8] {
        let bytes = &self.buf[self.pos..];
        self.pos = self.buf.len();
        bytes
    }

    /// Skips `n` bytes.
    pub fn skip(&mut self, n: usize) -> Result<(), Truncated> {
        self.take(n).map(|_| ())
    }

    /// The next byte without consuming it.
    pub fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    /// `int<1>`.
    pub fn u8(&mut self) -> Result<u8, Truncated> {
        Ok(self.take(1)?[0])
    }

    /// `int<2>`.
    pub fn u16(&mut self) -> Result<u16, Truncated> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    /// `int<3>`.
    pub fn u24(&mut self) -> Result<u32, Truncated> {
        let b: [u8; 3] = self.array()?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], 0]))
    }

    /// `int<4>`.
    pub fn u32(&mut self) -> Result<u32, Truncated> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    /// `int<8>`.
    pub fn u64(&mut self) -> Result<u64, Truncated> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// A fixed-size array of the next `N` bytes.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], Truncated> {
        let bytes = self.take(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    /// `int<lenenc>`. 0xFB (NULL in a row) and 0xFF are not integers here.
    pub fn lenenc_int(&mut self) -> Result<u64, Truncated> {
        match self.u8()? {
            b @ 0..=0xfa => Ok(u64::from(b)),
            0xfc => Ok(u64::from(self.u16()?)),
            0xfd => Ok(u64::from(self.u24()?)),
            0xfe => self.u64(),
            _ => Err(Truncated),
        }
    }

    /// `string<lenenc>`.
    pub fn lenenc_bytes(&mut self) -> Result<&'a [u8], Truncated> {
        let len = self.lenenc_int()?;
        let len = usize::try_from(len).map_err(|_| Truncated)?;
        self.take(len)
    }

    /// `string<NUL>`: the bytes before the next 0x00; the 0x00 is consumed.
    pub fn nul_bytes(&mut self) -> Result<&'a [u8], Truncated> {
        let rest = &self.buf[self.pos..];
        let len = rest.iter().position(|&b| b == 0).ok_or(Truncated)?;
        self.pos += len + 1;
        Ok(&rest[..len])
    }
}

/// Appends `int<lenenc>`: 1 byte below 251, then 0xFC + 2, 0xFD + 3, 0xFE + 8 bytes.
pub fn put_lenenc_int(out: &mut Vec<u8>, v: u64) {
    if v < 0xfb {
        out.push(v as u8);
    } else if v <= 0xffff {
        out.push(0xfc);
        out.extend_from_slice(&(v as u16).to_le_bytes());
    } else if v <= 0xff_ffff {
        out.push(0xfd);
        out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
    } else {
        out.push(0xfe);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Appends `string<lenenc>`.
pub fn put_lenenc_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_lenenc_int(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Appends `string<NUL>`. The caller guarantees `bytes` holds no 0x00.
pub fn put_nul_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(bytes);
    out.push(0);
}

/// Appends `int<2>`.
pub fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends `int<4>`.
pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        put_lenenc_int(&mut out, v);
        let mut c = Cursor::new(&out);
        assert_eq!(c.lenenc_int(), Ok(v));
        assert!(c.is_empty());
        out
    }

    #[test]
    fn lenenc_int_boundaries() {
        assert_eq!(roundtrip(0), vec![0]);
        assert_eq!(roundtrip(250), vec![250]);
        assert_eq!(roundtrip(251), vec![0xfc, 251, 0]);
        assert_eq!(roundtrip(0xffff), vec![0xfc, 0xff, 0xff]);
        assert_eq!(roundtrip(0x1_0000), vec![0xfd, 0, 0, 1]);
        assert_eq!(roundtrip(0xff_ffff), vec![0xfd, 0xff, 0xff, 0xff]);
        assert_eq!(roundtrip(0x100_0000), vec![0xfe, 0, 0, 0, 1, 0, 0, 0, 0]);
        assert_eq!(roundtrip(u64::MAX), {
            let mut v = vec![0xfe];
            v.extend_from_slice(&[0xff; 8]);
            v
        });
    }

    #[test]
    fn lenenc_int_rejects_null_err_and_truncation() {
        assert_eq!(Cursor::new(&[0xfb]).lenenc_int(), Err(Truncated));
        assert_eq!(Cursor::new(&[0xff]).lenenc_int(), Err(Truncated));
        assert_eq!(Cursor::new(&[0xfc, 1]).lenenc_int(), Err(Truncated));
        assert_eq!(Cursor::new(&[0xfd, 1, 2]).lenenc_int(), Err(Truncated));
        assert_eq!(Cursor::new(&[0xfe, 1, 2, 3]).lenenc_int(), Err(Truncated));
        assert_eq!(Cursor::new(&[]).lenenc_int(), Err(Truncated));
    }

    #[test]
    fn lenenc_bytes_huge_length_does_not_panic() {
        let mut c = Cursor::new(&[0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, b'a']);
        assert_eq!(c.lenenc_bytes(), Err(Truncated));
    }

    #[test]
    fn nul_strings_and_fixed_ints() {
        let data = [b'a', b'b', 0, 1, 2, 3, 4, 5];
        let mut c = Cursor::new(&data);
        assert_eq!(c.nul_bytes(), Ok(&b"ab"[..]));
        assert_eq!(c.u16(), Ok(0x0201));
        assert_eq!(c.u24(), Ok(0x050403));
        assert_eq!(c.u8(), Err(Truncated));
        assert_eq!(Cursor::new(b"abc").nul_bytes(), Err(Truncated));
        assert_eq!(Cursor::new(&[1, 2, 3]).u32(), Err(Truncated));
        assert_eq!(Cursor::new(&[1; 7]).u64(), Err(Truncated));
        assert_eq!(Cursor::new(&[1; 3]).take(usize::MAX), Err(Truncated));
    }
}
