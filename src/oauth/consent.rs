//! The consent page: one plain HTML form, no scripts, no external resources. It says who asks
//! (a verified host, or a self-given name marked unverified), where the browser goes next, what
//! each role sees, how long access lasts and how to revoke it; asks for the owner's passphrase.
//! Every refusal a person can meet on the way is a page too. Served with
//! headers that forbid framing (clickjacking) and caching.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use std::time::Duration;

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
    refusal_page(status, "Cannot connect", message)
}

/// A page that says what went wrong and what to do next, in a person's words.
pub fn refusal_page(status: StatusCode, title: &str, message: &str) -> Response {
    page(
        status,
        title,
        &format!("<p class=\"msg\">{}</p>", escape(message)),
    )
}

/// Who is asking, as far as the gateway can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientLabel {
    /// A client-ID metadata document fetched over https from this host.
    Verified { host: String },
    /// A dynamically registered client: only the name it gave itself.
    SelfNamed { name: String },
}

impl ClientLabel {
    /// The name used in logs and lists.
    pub fn name(&self) -> &str {
        match self {
            Self::Verified { host } => host,
            Self::SelfNamed { name } => name,
        }
    }

    fn html(&self) -> String {
        match self {
            Self::Verified { host } => format!(
                "<strong>{h}</strong> <span class=\"ok\">(verified: its identity document is served by {h})</span>",
                h = escape(host)
            ),
            Self::SelfNamed { name } => format!(
                "<strong>{}</strong> <span class=\"warn\">(a name the app gave itself: not verified)</span>",
                escape(name)
            ),
        }
    }
}

pub struct Consent<'a> {
    pub request_id: &'a str,
    pub csrf: &'a str,
    pub client: &'a ClientLabel,
    pub redirect_uri: &'a str,
    pub message: Option<&'a str>,
    /// The role to show selected: what the person chose last time, else read.
    pub role: &'a str,
    pub access_ttl: Duration,
    pub refresh_ttl: Duration,
    /// The gateway is reached over https: the cookie gets `Secure`.
    pub secure: bool,
}

fn checked(c: &Consent<'_>, role: &str) -> &'static str {
    if c.role == role { " checked" } else { "" }
}

/// The form; sets the CSRF cookie that a POST must send back with the same value as its field.
pub fn consent_page(status: StatusCode, c: &Consent<'_>) -> Response {
    let message = c
        .message
        .map(|m| format!("<p class=\"msg\" role=\"alert\">{}</p>", escape(m)))
        .unwrap_or_default();
    let host = url::Url::parse(c.redirect_uri)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default();
    let body = format!(
        "<p>{who} asks to use your CopyQ clipboard history through copyq-mcp.</p>\
         <p>When you decide, your browser goes back to <strong>{host}</strong>: <code>{redirect}</code></p>{message}\
         <form method=\"post\" action=\"/authorize\">\
         <input type=\"hidden\" name=\"request_id\" value=\"{rid}\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <fieldset><legend>Access</legend>\
         <label><input type=\"radio\" name=\"role\" value=\"read\"{read}> <strong>Read</strong>: sees every CopyQ tab and item, \
         <em>your clipboard history included</em> (everything you have copied), and can search them. Changes nothing.</label><br>\
         <label><input type=\"radio\" name=\"role\" value=\"write\"{write}> <strong>Write</strong>: everything Read sees, and may add, \
         change, move and delete items in the tabs under <code>mcp/</code>. Your other tabs stay read-only.</label>\
         </fieldset>\
         <p>Access lasts {access} at a time and renews itself while the app uses it, for up to {refresh} without use. \
         Revoke it at any time on this machine with <code>copyq-mcp clients revoke</code>.</p>\
         <p><label>Owner passphrase <input type=\"password\" name=\"passphrase\" autocomplete=\"current-password\" autofocus></label></p>\
         <button type=\"submit\" name=\"action\" value=\"approve\">Approve</button>\
         <button type=\"submit\" name=\"action\" value=\"deny\">Deny</button></form>",
        who = c.client.html(),
        host = escape(&host),
        redirect = escape(c.redirect_uri),
        rid = escape(c.request_id),
        csrf = escape(c.csrf),
        read = checked(c, "read"),
        write = checked(c, "write"),
        access = humantime::format_duration(c.access_ttl),
        refresh = humantime::format_duration(c.refresh_ttl),
    );
    let mut res = page(status, "Connect an app to CopyQ", &body);
    let cookie = format!(
        "{CSRF_COOKIE}={}; Path=/authorize; HttpOnly; SameSite=Strict; Max-Age=600{}",
        c.csrf,
        if c.secure { "; Secure" } else { "" }
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
