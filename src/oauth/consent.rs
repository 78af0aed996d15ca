//! The consent page: one plain HTML form, no scripts, no external resources. It names the client
//! and where it will be redirected, asks for the owner's passphrase and offers the role. Served with
//! headers that forbid framing (clickjacking) and caching.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};

pub const CSRF_COOKIE: &str = "copyq_mcp_csrf";

fn escape(s: &str) -> String {
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
code{background:#f2f2f2;padding:.1rem .3rem;word-break:break-all}.msg{color:#b00020}\
fieldset{border:1px solid #ccc;margin:1rem 0}button{margin-right:.5rem;padding:.4rem 1rem}";

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
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    res
}

fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\
         <title>{t}</title><style>{STYLE}</style></head><body><h1>{t}</h1>{body}</body></html>",
        t = escape(title)
    );
    secure((status, Html(html)).into_response())
}

/// A request that cannot be sent back to the client (unknown client, bad redirect URI, expired).
pub fn error_page(status: StatusCode, message: &str) -> Response {
    page(
        status,
        "Cannot connect",
        &format!("<p class=\"msg\">{}</p>", escape(message)),
    )
}

pub struct Consent<'a> {
    pub request_id: &'a str,
    pub csrf: &'a str,
    pub client_name: &'a str,
    pub redirect_uri: &'a str,
    pub message: Option<&'a str>,
}

/// The form; sets the CSRF cookie that a POST must send back with the same value as its field.
pub fn consent_page(status: StatusCode, c: &Consent<'_>) -> Response {
    let message = c
        .message
        .map(|m| format!("<p class=\"msg\">{}</p>", escape(m)))
        .unwrap_or_default();
    let body = format!(
        "<p><strong>{name}</strong> asks to use your CopyQ clipboard history through copyq-mcp.</p>\
         <p>After you approve, you will be sent to <code>{redirect}</code>.</p>{message}\
         <form method=\"post\" action=\"/authorize\">\
         <input type=\"hidden\" name=\"request_id\" value=\"{rid}\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <fieldset><legend>Access</legend>\
         <label><input type=\"radio\" name=\"role\" value=\"read\" checked> Read: read tabs and items</label><br>\
         <label><input type=\"radio\" name=\"role\" value=\"write\"> Write: also add, change and delete items under mcp/</label>\
         </fieldset>\
         <p><label>Owner passphrase <input type=\"password\" name=\"passphrase\" autocomplete=\"current-password\" autofocus></label></p>\
         <button type=\"submit\" name=\"action\" value=\"approve\">Approve</button>\
         <button type=\"submit\" name=\"action\" value=\"deny\">Deny</button></form>",
        name = escape(c.client_name),
        redirect = escape(c.redirect_uri),
        rid = escape(c.request_id),
        csrf = escape(c.csrf),
    );
    let mut res = page(status, "Connect an app to CopyQ", &body);
    let cookie = format!(
        "{CSRF_COOKIE}={}; Path=/authorize; HttpOnly; SameSite=Strict; Max-Age=600",
        c.csrf
    );
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        res.headers_mut().insert(header::SET_COOKIE, v);
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_supplied_text_is_escaped() {
        assert_eq!(
            escape("<script>\"x\"&'"),
            "&lt;script&gt;&quot;x&quot;&amp;&#39;"
        );
    }
}
