//! An HTTP/1 answer given before its request's body was read to the end (a 401 from the bearer
//! check, a 413, a 429) says `Connection: close`.
//!
//! Why: hyper, having sent such an answer, reads what is left of the body only if it has already
//! arrived; otherwise it closes the connection. The answer went out first, without
//! `Connection: close`, so the client puts the connection back in its pool and its next request
//! on it meets a closed socket ("Server disconnected without sending a response" in httpx: the
//! OAuth clients' first POST after their 401 failed that way now and then, more often on a busy
//! machine, where the body's packet comes later). Saying `close` lets every client open a new
//! connection instead; refusals are rare, so the cost is one connection each.
//!
//! HTTP/2 needs nothing: an unread body ends its stream alone, never the connection.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Version, header};
use axum::middleware::Next;
use axum::response::Response;
use http_body::{Frame, SizeHint};

/// The layer: see the module's comment.
pub async fn close_if_unread(req: Request, next: Next) -> Response {
    if req.version() > Version::HTTP_11 || !has_body(req.headers()) {
        return next.run(req).await;
    }
    let read = Arc::new(AtomicBool::new(false));
    let watched = Arc::clone(&read);
    let req = req.map(|inner| {
        Body::new(Watched {
            inner,
            read: watched,
        })
    });
    let mut response = next.run(req).await;
    if !read.load(Ordering::Acquire) {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// Whether the request says a body follows (a non-zero length, or a chunked one).
fn has_body(headers: &HeaderMap) -> bool {
    if headers.contains_key(header::TRANSFER_ENCODING) {
        return true;
    }
    match headers.get(header::CONTENT_LENGTH) {
        Some(length) => length.to_str().map_or(true, |v| v.trim() != "0"),
        None => false,
    }
}

/// A request body that records when it has been read to its end.
struct Watched {
    inner: Body,
    read: Arc<AtomicBool>,
}

impl http_body::Body for Watched {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            self.read.store(true, Ordering::Release);
        }
        polled
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

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, HeaderValue::from_static(v));
        }
        map
    }

    #[test]
    fn a_body_is_announced_by_its_length_or_chunking() {
        assert!(has_body(&headers(&[("content-length", "12")])));
        assert!(has_body(&headers(&[("transfer-encoding", "chunked")])));
        assert!(!has_body(&headers(&[("content-length", "0")])));
        assert!(!has_body(&headers(&[])));
    }
}
