//! Connection limits, so that slow or idle clients cannot hold the server: at most
//! `limits.max_connections` open connections, and `limits.max_connections_per_address` from one
//! address (a trusted proxy's connections are exempt from the latter: they carry many clients).
//! A connection past either cap is closed at once, before TLS or HTTP. IPv6 peers are counted by
//! their prefix (`limits.ipv6_prefix`), as the per-address request limits count them. Slow
//! request heads are hyper's to time out (see `app.rs`); idle connections, HTTP/1 and HTTP/2
//! alike, the watchdog's ([`idle`]).

use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum_server::accept::Accept;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::TrustedProxies;

mod idle;
use idle::{Activity, Tracked, Watch};

/// Open connections, in all and per address.
#[derive(Debug)]
pub struct ConnLimits {
    max: usize,
    per_address: usize,
    proxies: TrustedProxies,
    /// How long a connection may stay open with no request in flight.
    idle: Duration,
    open: Mutex<(usize, HashMap<String, usize>)>,
}

/// One admitted connection; dropping it frees its place.
#[derive(Debug)]
pub struct Place {
    limits: Arc<ConnLimits>,
    key: String,
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut open = self.limits.open.lock().unwrap_or_else(|e| e.into_inner());
        open.0 = open.0.saturating_sub(1);
        if let Some(n) = open.1.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                open.1.remove(&self.key);
            }
        }
    }
}

impl ConnLimits {
    pub fn new(
        max: usize,
        per_address: usize,
        proxies: TrustedProxies,
        idle: Duration,
    ) -> Arc<Self> {
        Arc::new(Self {
            max,
            per_address,
            proxies,
            idle,
            open: Mutex::new((0, HashMap::new())),
        })
    }

    /// A place for a connection from `ip`, if both caps allow one.
    pub fn admit(self: &Arc<Self>, ip: IpAddr) -> Option<Place> {
        let key = self.proxies.client_key(ip);
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let from_ip = open.1.get(&key).copied().unwrap_or(0);
        if open.0 >= self.max || (from_ip >= self.per_address && !self.proxies.trusts(ip)) {
            return None;
        }
        open.0 += 1;
        *open.1.entry(key.clone()).or_default() += 1;
        Some(Place {
            limits: self.clone(),
            key,
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
    type Service = Tracked<A::Service>;
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
        let idle = self.limits.idle;
        Box::pin(async move {
            let (stream, service) = accepting.await?;
            let activity = Activity::new();
            Ok((
                Held {
                    inner: stream,
                    watch: Watch::new(activity.clone(), idle),
                    ended: false,
                    _place: place,
                },
                Tracked::new(service, activity),
            ))
        })
    }
}

/// A stream holding its connection's place, and watching it for idleness: once the watchdog
/// gives up on it, reads answer end of stream and hyper ends the connection.
#[derive(Debug)]
pub struct Held<S> {
    inner: S,
    watch: Watch,
    ended: bool,
    _place: Place,
}

impl<S: AsyncRead + Unpin> AsyncRead for Held<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.ended {
            return Poll::Ready(Ok(()));
        }
        let read = Pin::new(&mut self.inner).poll_read(cx, buf);
        if read.is_pending() && self.watch.expired(cx) {
            self.ended = true;
            return Poll::Ready(Ok(()));
        }
        read
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
        let l = ConnLimits::new(4, 2, proxies, Duration::from_secs(10));
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

    #[test]
    fn ipv6_peers_are_counted_by_prefix() {
        let l = ConnLimits::new(100, 2, TrustedProxies::default(), Duration::from_secs(10));
        let in_64 = |last: u16| IpAddr::from([0x2001, 0xdb8, 7, 7, 0, 0, 0, last]);
        let _a = l.admit(in_64(1)).expect("first");
        let _b = l.admit(in_64(2)).expect("second");
        assert!(
            l.admit(in_64(3)).is_none(),
            "a third address of the same /64"
        );
        let other: IpAddr = "2001:db8:7:8::1".parse().unwrap();
        assert!(l.admit(other).is_some(), "another /64");
        let per_48 = TrustedProxies::default().with_v6_prefix(48);
        let l = ConnLimits::new(100, 1, per_48, Duration::from_secs(10));
        let _c = l.admit(in_64(1)).expect("first");
        assert!(l.admit(other).is_none(), "the same /48");
    }
}
