//! HTTP/2 connections are held to HTTP/1's rules: one idle after a request is closed within the
//! idle time (h2c with prior knowledge, and h2 over the built-in TLS by ALPN), and one may carry
//! only `limits.max_streams_per_connection` requests at once. No CopyQ: the gateway runs over the
//! in-memory backend.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Empty;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::support::*;

fn addr(gw: &Gateway) -> std::net::SocketAddr {
    gw.base
        .split("://")
        .nth(1)
        .and_then(|a| a.parse().ok())
        .expect("gateway address")
}

/// One `GET /healthz` over HTTP/2 on `io`, then nothing: whether the server closed the connection
/// within `within` (the client side is kept open all along).
async fn idle_after_one_request<IO>(io: IO, base: &str, within: Duration) -> bool
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut send, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(io))
            .await
            .expect("h2 handshake");
    let mut conn = tokio::spawn(conn);
    let req = hyper::Request::get(format!("{base}/healthz"))
        .body(Empty::<Bytes>::new())
        .expect("request");
    let res = send.send_request(req).await.expect("h2 request");
    assert_eq!(res.status(), 200);
    drop(res);
    let closed = tokio::time::timeout(within, &mut conn).await.is_ok();
    drop(send);
    conn.abort();
    closed
}

#[tokio::test]
async fn an_idle_h2c_connection_is_closed() {
    let gw = edge_gateway_with(|s| s.limits.header_read_timeout_ms = 300).await;
    let tcp = tokio::net::TcpStream::connect(addr(&gw))
        .await
        .expect("connect");
    assert!(
        idle_after_one_request(tcp, &gw.base, Duration::from_secs(5)).await,
        "an h2c connection idle after one request stays open"
    );
}

#[tokio::test]
async fn an_idle_h2_connection_over_tls_is_closed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cert = copyq_mcp::tls::generate(&["127.0.0.1".into()], dir.path()).expect("cert");
    let gw = edge_gateway_with(|s| {
        s.tls.cert = cert.cert.display().to_string();
        s.tls.key = cert.key.display().to_string();
        s.limits.header_read_timeout_ms = 300;
    })
    .await;
    let tls = tls_client(&cert.cert);
    let tcp = tokio::net::TcpStream::connect(addr(&gw))
        .await
        .expect("connect");
    let name = rustls_pki_types::ServerName::try_from("127.0.0.1").expect("name");
    let stream = tls.connect(name, tcp).await.expect("TLS handshake");
    assert_eq!(
        stream.get_ref().1.alpn_protocol(),
        Some(&b"h2"[..]),
        "h2 by ALPN"
    );
    assert!(
        idle_after_one_request(stream, &gw.base, Duration::from_secs(5)).await,
        "an h2 connection idle after one request stays open"
    );
}

/// A client trusting `cert` and offering h2.
fn tls_client(cert: &std::path::Path) -> tokio_rustls::TlsConnector {
    use rustls_pki_types::CertificateDer;
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(cert).expect("pem") {
        roots.add(c.expect("cert")).expect("root");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

#[tokio::test]
async fn an_h2_connection_carries_few_requests_at_once() {
    let gw = edge_gateway_with(|s| s.limits.max_streams_per_connection = 7).await;
    let mut tcp = tokio::net::TcpStream::connect(addr(&gw))
        .await
        .expect("connect");
    // The client preface and an empty SETTINGS frame; the server's SETTINGS frame comes first.
    tcp.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
        .await
        .expect("preface");
    let mut head = [0u8; 9];
    tcp.read_exact(&mut head).await.expect("frame head");
    assert_eq!(head[3], 4, "a SETTINGS frame");
    let len = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
    let mut payload = vec![0u8; len];
    tcp.read_exact(&mut payload).await.expect("settings");
    let streams = payload
        .chunks(6)
        .find(|s| s[..2] == [0, 3])
        .map(|s| u32::from_be_bytes([s[2], s[3], s[4], s[5]]));
    assert_eq!(streams, Some(7), "SETTINGS_MAX_CONCURRENT_STREAMS");
}
