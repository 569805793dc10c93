//! TLS for client connections: the server's certificate loaded once at start,
//! and the in-place upgrade of a connection after the client's SSLRequest.
//!
//! MySQL switches to TLS in the middle of the connection phase (see
//! `protocol::handshake`): the server offers CLIENT_SSL in its greeting, the
//! client answers with a 32-byte SSLRequest and immediately starts a TLS
//! handshake on the same socket, and the rest of the session — the real login
//! included — runs inside TLS. Two details matter here:
//! - The client does not wait after the SSLRequest, so the first bytes of its
//!   ClientHello may already sit in the packet reader's buffer; [`Rewind`]
//!   replays them to the TLS layer before reading the socket again.
//! - rustls runs with the `ring` provider, TLS 1.2 and 1.3 (MySQL 8 clients
//!   offer both; 1.0/1.1 are not supported by rustls at all). Client
//!   certificates are not requested.

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_rustls::rustls::{self, ServerConfig};
use tokio_rustls::TlsAcceptor;

/// Builds the acceptor from PEM files: a certificate chain and its private key.
/// The error says which file is wrong and why, for the startup log.
pub fn acceptor(cert_path: &str, key_path: &str) -> Result<TlsAcceptor, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert_path)
        .and_then(|it| it.collect::<Result<_, _>>())
        .map_err(|e| format!("tls_cert {cert_path}: {e}"))?;
    if certs.is_empty() {
        return Err(format!("tls_cert {cert_path}: no certificate in the file"));
    }
    let key =
        PrivateKeyDer::from_pem_file(key_path).map_err(|e| format!("tls_key {key_path}: {e}"))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("tls_cert/tls_key: {e}"))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// A stream that first yields `prefix` (bytes already read from `inner`), then
/// reads `inner`; writes go straight to `inner`.
pub struct Rewind<S> {
    prefix: Vec<u8>,
    pos: usize,
    inner: S,
}

impl<S> Rewind<S> {
    /// Replays `prefix` before `inner`.
    pub fn new(prefix: Vec<u8>, inner: S) -> Self {
        Rewind {
            prefix,
            pos: 0,
            inner,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Rewind<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.pos < this.prefix.len() {
            let n = buf.remaining().min(this.prefix.len() - this.pos);
            buf.put_slice(&this.prefix[this.pos..this.pos + n]);
            this.pos += n;
            if this.pos == this.prefix.len() {
                this.prefix = Vec::new();
                this.pos = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Rewind<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[test]
    fn rewind_replays_the_prefix_then_reads_the_stream() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let mut r = Rewind::new(b"hello ".to_vec(), &b"world"[..]);
            let mut small = [0u8; 4];
            r.read_exact(&mut small).await.expect("read");
            assert_eq!(&small, b"hell");
            let mut rest = Vec::new();
            r.read_to_end(&mut rest).await.expect("read");
            assert_eq!(rest, b"o world");
        });
    }

    #[test]
    fn missing_or_empty_files_are_reported() {
        let dir = tempfile::tempdir().expect("tempdir");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "").expect("write");
        let empty = empty.to_string_lossy().into_owned();
        let err = acceptor("/nonexistent/cert.pem", &empty)
            .err()
            .expect("error");
        assert!(err.contains("tls_cert /nonexistent/cert.pem"), "{err}");
        let err = acceptor(&empty, &empty).err().expect("error");
        assert!(err.contains("no certificate"), "{err}");
    }
}
