//! The idle watchdog of one connection, HTTP/1 and HTTP/2 alike: a connection with no request in
//! flight for `limits.header_read_timeout_ms` is asked to close gracefully (HTTP/2: GOAWAY), and
//! closed [`GRACE`] later if it is still there.
//!
//! hyper's HTTP/1 header-read timeout already closes an idle keep-alive connection, but HTTP/2
//! has no idle timeout at all (its keep-alive pings only find dead peers: a live client answers
//! them), so an h2 or h2c connection that had answered one request stayed open for ever and a
//! few hundred of them took every place of `limits.max_connections`. The watchdog counts the
//! requests in flight on the connection ([`Tracked`] wraps its service; a request ends when its
//! response body is dropped, sent or reset) and runs inside the connection's reads ([`Watch`]),
//! which hyper polls whenever it waits for the peer: no task of its own.

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum_server::ConnectionShutdown;
use bytes::Buf;
use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

/// How long a connection asked to close may take to leave on its own (an h2 client answers the
/// GOAWAY's ping) before it is cut.
pub const GRACE: Duration = Duration::from_secs(1);

/// What a connection is doing, shared by its stream and its service.
#[derive(Debug)]
pub struct Activity {
    in_flight: AtomicUsize,
    /// When the last request ended (or the connection opened).
    idle_since: Mutex<Instant>,
    /// The handle axum-server puts on each request, to close this connection gracefully.
    shutdown: Mutex<Option<ConnectionShutdown>>,
}

impl Activity {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            in_flight: AtomicUsize::new(0),
            idle_since: Mutex::new(Instant::now()),
            shutdown: Mutex::new(None),
        })
    }

    /// Idle since when, or `None` while a request is in flight.
    fn idle_since(&self) -> Option<Instant> {
        let since = *self.idle_since.lock().unwrap_or_else(|e| e.into_inner());
        (self.in_flight.load(Ordering::Acquire) == 0).then_some(since)
    }

    fn ask_to_close(&self) {
        if let Some(s) = &*self.shutdown.lock().unwrap_or_else(|e| e.into_inner()) {
            s.graceful_shutdown();
        }
    }
}

/// One request in flight; dropping it ends the request.
#[derive(Debug)]
pub struct InFlight(Arc<Activity>);

impl InFlight {
    fn start(activity: &Arc<Activity>) -> Self {
        activity.in_flight.fetch_add(1, Ordering::AcqRel);
        Self(activity.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        *self.0.idle_since.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The watchdog's state, kept in the connection's stream.
#[derive(Debug)]
pub struct Watch {
    activity: Arc<Activity>,
    idle: Duration,
    timer: Pin<Box<Sleep>>,
    /// When the connection was asked to close, if it was.
    asked: Option<Instant>,
}

impl Watch {
    pub fn new(activity: Arc<Activity>, idle: Duration) -> Self {
        Self {
            activity,
            idle,
            timer: Box::pin(tokio::time::sleep(idle)),
            asked: None,
        }
    }

    /// Called when a read is pending: `true` once the connection must end (the read then
    /// answers end of stream). Leaves the timer armed with `cx`'s waker otherwise.
    pub fn expired(&mut self, cx: &mut Context<'_>) -> bool {
        loop {
            let now = Instant::now();
            let deadline = match (self.asked, self.activity.idle_since()) {
                (Some(asked), _) => asked + GRACE,
                (None, Some(since)) => since + self.idle,
                // Busy: look again after a whole idle time.
                (None, None) => now + self.idle,
            };
            if self.timer.deadline() != deadline {
                self.timer.as_mut().reset(deadline);
            }
            if self.timer.as_mut().poll(cx).is_pending() {
                return false;
            }
            match self.asked {
                Some(_) => return true,
                None if self.activity.idle_since().is_some() => {
                    tracing::debug!("closing an idle connection");
                    self.asked = Some(now);
                    self.activity.ask_to_close();
                }
                None => {}
            }
        }
    }
}

/// A connection's service, counting its requests in flight for the watchdog.
#[derive(Debug, Clone)]
pub struct Tracked<S> {
    inner: S,
    activity: Arc<Activity>,
}

impl<S> Tracked<S> {
    pub fn new(inner: S, activity: Arc<Activity>) -> Self {
        Self { inner, activity }
    }
}

type Answering<T, E> = Pin<Box<dyn Future<Output = Result<T, E>> + Send>>;

impl<S, B, R> tower::Service<http::Request<R>> for Tracked<S>
where
    S: tower::Service<http::Request<R>, Response = http::Response<B>>,
    S::Future: Send + 'static,
    B: Body + Unpin,
{
    type Response = http::Response<Counted<B>>;
    type Error = S::Error;
    type Future = Answering<Self::Response, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<R>) -> Self::Future {
        if let Some(s) = req.extensions().get::<ConnectionShutdown>() {
            let mut known = self
                .activity
                .shutdown
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if known.is_none() {
                *known = Some(s.clone());
            }
        }
        let request = InFlight::start(&self.activity);
        let answer = self.inner.call(req);
        Box::pin(async move {
            let res = answer.await?;
            Ok(res.map(|body| Counted {
                inner: body,
                _request: request,
            }))
        })
    }
}

/// A response body that keeps its request in flight until it is sent or dropped.
#[derive(Debug)]
pub struct Counted<B> {
    inner: B,
    _request: InFlight,
}

impl<B: Body + Unpin> Body for Counted<B>
where
    B::Data: Buf,
{
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expired(w: &mut Watch) -> bool {
        w.expired(&mut Context::from_waker(std::task::Waker::noop()))
    }

    #[tokio::test]
    async fn an_idle_connection_expires_and_a_busy_one_does_not() {
        let activity = Activity::new();
        let idle = Duration::from_millis(300);
        let mut watch = Watch::new(activity.clone(), idle);
        let request = InFlight::start(&activity);
        tokio::time::sleep(idle * 2).await;
        assert!(!expired(&mut watch), "a request in flight keeps it open");
        assert!(watch.asked.is_none());
        drop(request);
        tokio::time::sleep(idle * 2).await;
        assert!(!expired(&mut watch), "asked to close, given a grace");
        assert!(watch.asked.is_some());
        tokio::time::sleep(GRACE + idle).await;
        assert!(expired(&mut watch), "then cut");
    }
}
