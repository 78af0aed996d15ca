//! The chrome of every HTML page a person sees (the consent form, and the refusals on the way):
//! no scripts, no external resources, inline style only, and headers that forbid framing,
//! caching and sniffing, and send the page's origin with its own form (see `secure`).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};

/// `s` safe inside HTML text and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}\
code{background:#f2f2f2;padding:.1rem .3rem}code.url{display:inline-block;margin-top:.3rem;word-break:break-all}.msg{color:#b00020}\
fieldset{border:1px solid #ccc;margin:1rem 0;line-height:1.5}button{margin-right:.5rem;padding:.4rem 1rem}\
.ok{color:#1b5e20}.warn{color:#8a4b00}";

fn secure(mut res: Response) -> Response {
    let h = res.headers_mut();
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::REFERRER_POLICY,
        // Not `no-referrer`: under it a browser sends the form's POST with `Origin: null`. With
        // `same-origin` the gateway's own origin goes with its own form, and no other site is
        // told where the person came from (the redirect back to the app carries no Referer).
        HeaderValue::from_static("same-origin"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    res
}

pub fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\
         <title>{t}</title><style>{STYLE}</style></head><body><h1>{t}</h1>{body}</body></html>",
        t = escape(title)
    );
    secure((status, Html(html)).into_response())
}
