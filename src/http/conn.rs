//! Connection limits, so that slow or idle clients cannot hold the server: at most
//! `limits.max_connections` open connections, and `limits.max_connections_per_address` from one
//! address (a trusted proxy's connections are exempt from the latter: they carry many clients).
//! A connection past either cap is closed at once, before TLS or HTTP; the timeouts that close
//! slow and idle ones are hyper's (see `app.rs`).

use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use axum_server::accept::Accept;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::TrustedProxies;

/// Open connections, in all and per address.
#[derive(Debug)]
pub struct ConnLimits {
    max: usize,
    per_address: usize,
    proxies: TrustedProxies,
    open: Mutex<(usize, HashMap<IpAddr, usize>)>,
}

/// One admitted connection; dropping it frees its place.
#[derive(Debug)]
pub struct Place {
    limits: Arc<ConnLimits>,
    ip: IpAddr,
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut open = self.limits.open.lock().unwrap_or_else(|e| e.into_inner());
        open.0 = open.0.saturating_sub(1);
        if let Some(n) = open.1.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                open.1.remove(&self.ip);
            }
        }
    }
}

impl ConnLimits {
    pub fn new(max: usize, per_address: usize, proxies: TrustedProxies) -> Arc<Self> {
        Arc::new(Self {
            max,
            per_address,
            proxies,
            open: Mutex::new((0, HashMap::new())),
        })
    }

    /// A place for a connection from `ip`, if both caps allow one.
    pub fn admit(self: &Arc<Self>, ip: IpAddr) -> Option<Place> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let from_ip = open.1.get(&ip).copied().unwrap_or(0);
        if open.0 >= self.max || (from_ip >= self.per_address && !self.proxies.trusts(ip)) {
            return None;
        }
        open.0 += 1;
        *open.1.entry(ip).or_default() += 1;
        Some(Place {
            limits: self.clone(),
            ip,
        })
    }
}

/// An acceptor that admits connections within the caps, then hands them to `inner`.
#[derive(Debug, Clone)]
pub struct Capped<A> {
    inner: A,
    limits: Arc<ConnLimits>,
}

impl<A> Capped<A> {
    pub fn new(inner: A, limits: Arc<ConnLimits>) -> Self {
        Self { inner, limits }
    }
}

type Accepting<T> = Pin<Box<dyn Future<Output = io::Result<T>> + Send>>;

impl<A, S> Accept<TcpStream, S> for Capped<A>
where
    A: Accept<TcpStream, S>,
    A::Future: Send + 'static,
    A::Stream: Send + 'static,
    A::Service: Send + 'static,
{
    type Stream = Held<A::Stream>;
    type Service = A::Service;
    type Future = Accepting<(Self::Stream, Self::Service)>;

    fn accept(&self, stream: TcpStream, service: S) -> Self::Future {
        let place = stream
            .peer_addr()
            .ok()
            .and_then(|a| self.limits.admit(a.ip()));
        let Some(place) = place else {
            tracing::warn!("connection refused: too many open connections");
            return Box::pin(async { Err(io::Error::other("too many open connections")) });
        };
        let accepting = self.inner.accept(stream, service);
        Box::pin(async move {
            let (stream, service) = accepting.await?;
            Ok((
                Held {
                    inner: stream,
                    _place: place,
                },
                service,
            ))
        })
    }
}

/// A stream holding its connection's place.
#[derive(Debug)]
pub struct Held<S> {
    inner: S,
    _place: Place,
}

impl<S: AsyncRead + Unpin> AsyncRead for Held<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Held<S> {
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

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_in_all_and_per_address_and_places_come_back() {
        let proxies = TrustedProxies::parse(&["127.0.0.1".into()]).unwrap();
        let l = ConnLimits::new(4, 2, proxies);
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let proxy: IpAddr = "127.0.0.1".parse().unwrap();
        let a1 = l.admit(a).expect("first");
        let _a2 = l.admit(a).expect("second");
        assert!(l.admit(a).is_none(), "per address");
        let _b1 = l.admit(b).expect("another address");
        let _p1 = l.admit(proxy).expect("a trusted proxy");
        assert!(l.admit(proxy).is_none(), "in all");
        drop(a1);
        assert!(l.admit(a).is_some(), "the place came back");
    }
}
