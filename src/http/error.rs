//! Every answer that is not an MCP message, mapped to the wire here and nowhere else. A tool that
//! ran and failed is a tool result `error|CODE|message` (mcp/error.rs); a protocol fault is a
//! JSON-RPC error (rmcp). Each variant's doc says what the client sees. What went wrong inside
//! (a store error, a fetch error) is logged where it happens and never carried here.

use std::borrow::Cow;
use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::page::{escape, page};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpError {
    /// 401 `Unauthorized\n` with this `WWW-Authenticate`; the same for every bad or missing token.
    Unauthorized(HeaderValue),
    /// 403 with one plain line (a Host or an Origin refused, to a program).
    Forbidden(&'static str),
    /// 404 `Session not found\n`: an unknown MCP session, or another caller's.
    NoSession,
    /// 408 `Request timeout\n`: the whole request took longer than `limits.request_timeout_ms`.
    Timeout,
    /// 413 `Request body too large\n`.
    TooLarge,
    /// 429 `Too many requests\n` with `Retry-After` (whole seconds, at least 1).
    TooManyRequests(Duration),
    /// 503 with one plain line (the token store is unavailable).
    Unavailable(&'static str),
    /// An OAuth error as JSON `{"error", "error_description"}` (RFC 6749 5.2, RFC 7591 3.2.2) with
    /// `Cache-Control: no-store`; `invalid_client` (401) adds `WWW-Authenticate: Basic`, and a
    /// `retry_after` adds `Retry-After`.
    OAuth {
        status: StatusCode,
        code: &'static str,
        description: Cow<'static, str>,
        retry_after: Option<Duration>,
    },
    /// An HTML page for a person (consent flow): what happened and what to do next.
    Page {
        status: StatusCode,
        title: &'static str,
        message: Cow<'static, str>,
    },
}

impl HttpError {
    pub fn oauth(
        status: StatusCode,
        code: &'static str,
        description: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self::OAuth {
            status,
            code,
            description: description.into(),
            retry_after: None,
        }
    }

    /// A page titled "Cannot connect": a request that cannot be sent back to the app.
    pub fn cannot_connect(status: StatusCode, message: impl Into<Cow<'static, str>>) -> Self {
        Self::Page {
            status,
            title: "Cannot connect",
            message: message.into(),
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NoSession => StatusCode::NOT_FOUND,
            Self::Timeout => StatusCode::REQUEST_TIMEOUT,
            Self::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::OAuth { status, .. } | Self::Page { status, .. } => *status,
        }
    }
}

fn retry_after(res: &mut Response, wait: Duration) {
    let secs = (wait.as_secs_f64().ceil() as u64).max(1);
    if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
        res.headers_mut().insert(header::RETRY_AFTER, v);
    }
}

/// `Cache-Control: no-store` (and `Pragma: no-cache`): OAuth answers are never cached.
pub fn no_store(res: &mut Response) {
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res.headers_mut()
        .insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let status = self.status();
        match self {
            Self::Unauthorized(challenge) => {
                let mut res = (status, "Unauthorized\n").into_response();
                res.headers_mut()
                    .insert(header::WWW_AUTHENTICATE, challenge);
                res
            }
            Self::Forbidden(line) | Self::Unavailable(line) => (status, line).into_response(),
            Self::NoSession => (status, "Session not found\n").into_response(),
            Self::Timeout => (status, "Request timeout\n").into_response(),
            Self::TooLarge => (status, "Request body too large\n").into_response(),
            Self::TooManyRequests(wait) => {
                let mut res = (status, "Too many requests\n").into_response();
                retry_after(&mut res, wait);
                res
            }
            Self::OAuth {
                code,
                description,
                retry_after: wait,
                ..
            } => {
                let body = json!({"error": code, "error_description": description});
                let mut res = (status, axum::Json(body)).into_response();
                no_store(&mut res);
                if code == "invalid_client" && status == StatusCode::UNAUTHORIZED {
                    res.headers_mut()
                        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic"));
                }
                if let Some(wait) = wait {
                    retry_after(&mut res, wait);
                }
                res
            }
            Self::Page { title, message, .. } => page(
                status,
                title,
                &format!("<p class=\"msg\">{}</p>", escape(&message)),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body(res: Response) -> String {
        let bytes = axum::body::to_bytes(res.into_body(), 1 << 20)
            .await
            .unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn each_variant_answers_as_its_doc_says() {
        let res = HttpError::TooManyRequests(Duration::from_millis(1200)).into_response();
        assert_eq!(res.status(), 429);
        assert_eq!(res.headers()["retry-after"], "2");
        assert_eq!(body(res).await, "Too many requests\n");
        let res = HttpError::oauth(StatusCode::UNAUTHORIZED, "invalid_client", "unknown client")
            .into_response();
        assert_eq!(res.headers()["www-authenticate"], "Basic");
        assert_eq!(res.headers()["cache-control"], "no-store");
        assert_eq!(
            body(res).await,
            r#"{"error":"invalid_client","error_description":"unknown client"}"#
        );
        let res = HttpError::cannot_connect(StatusCode::BAD_REQUEST, "It <broke>.").into_response();
        assert_eq!(res.status(), 400);
        assert_eq!(res.headers()["x-frame-options"], "DENY");
        assert!(
            body(res)
                .await
                .contains("<h1>Cannot connect</h1><p class=\"msg\">It &lt;broke&gt;.</p>")
        );
        for (e, status, text) in [
            (HttpError::NoSession, 404, "Session not found\n"),
            (HttpError::Timeout, 408, "Request timeout\n"),
            (HttpError::TooLarge, 413, "Request body too large\n"),
            (
                HttpError::Forbidden("Origin not allowed\n"),
                403,
                "Origin not allowed\n",
            ),
        ] {
            let res = e.into_response();
            assert_eq!(res.status(), status);
            assert_eq!(body(res).await, text);
        }
    }
}
