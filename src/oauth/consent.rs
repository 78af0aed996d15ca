//! The consent page: one plain HTML form, no scripts, no external resources. It says who asks
//! (a verified host, or a self-given name marked unverified), where the browser goes next, what
//! each role sees, how long access lasts and how to revoke it; asks for the owner's passphrase.
//! Every refusal a person can meet on the way is a page too ([`crate::http::HttpError::Page`]),
//! with the same chrome and headers that forbid framing (clickjacking) and caching.

use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

use crate::http::page::{escape, page};

const CSRF_COOKIE: &str = "copyq_mcp_csrf";

/// The CSRF cookie of one consent request: one per request, so that a second consent page (a
/// second tab, a client that opened the link twice) does not overwrite the first one's.
pub fn csrf_cookie_name(request_id: &str) -> String {
    format!("{CSRF_COOKIE}_{request_id}")
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
    /// Which tabs to show chosen (`all`, `managed` or `list`) and the list as typed: what the
    /// person chose last time, else all.
    pub tabs: &'a str,
    pub tab_list: &'a str,
    pub access_ttl: Duration,
    pub refresh_ttl: Duration,
    /// The gateway is reached over https: the cookie gets `Secure`.
    pub secure: bool,
    pub redact: crate::privacy::Redact,
    /// `[privacy] external_images`: whether images of tabs outside `mcp/` may be sent.
    pub external_images: bool,
}

/// What the page says of images, which cannot be masked.
fn images(external: bool) -> &'static str {
    if external {
        " Images cannot be masked: the app may see the screenshots and pictures in the tabs it reads, your clipboard history included (<code>[privacy] external_images</code>)."
    } else {
        " Images in your tabs outside <code>mcp/</code> stay on this computer (<code>[privacy] external_images</code>)."
    }
}

/// What the page says `[privacy] redact` masks.
fn redaction(r: crate::privacy::Redact) -> &'static str {
    use crate::privacy::Redact;
    match r {
        Redact::External => {
            "Secrets in your tabs outside <code>mcp/</code> (keys, tokens, card numbers) are masked before they leave this computer."
        }
        Redact::All => {
            "Secrets in every tab (keys, tokens, card numbers) are masked before they leave this computer."
        }
        Redact::Off => {
            "Secret masking is off (<code>[privacy] redact</code>): the app sees secrets as they are."
        }
    }
}

/// A lifetime as a person says it: "1 hour", "30 days", "15 minutes".
fn spoken(d: Duration) -> String {
    let secs = d.as_secs();
    let (n, unit) = match secs {
        s if s >= 86_400 && s % 86_400 == 0 => (s / 86_400, "day"),
        s if s >= 3_600 && s % 3_600 == 0 => (s / 3_600, "hour"),
        s if s >= 60 && s % 60 == 0 => (s / 60, "minute"),
        s => (s, "second"),
    };
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

fn checked(chosen: &str, value: &str) -> &'static str {
    if chosen == value { " checked" } else { "" }
}

/// The choice of tabs: all (the default), the managed ones, or a list.
fn tabs_fieldset(c: &Consent<'_>) -> String {
    format!(
        "<fieldset><legend>Tabs</legend>\
         <label><input type=\"radio\" name=\"tabs\" value=\"all\"{all}> <strong>All tabs</strong>, \
         your clipboard history included</label><br>\
         <label><input type=\"radio\" name=\"tabs\" value=\"managed\"{managed}> <strong>Managed tabs only</strong>: \
         the tabs under <code>mcp/</code>, none of your own</label><br>\
         <label><input type=\"radio\" name=\"tabs\" value=\"list\"{list}> <strong>Only these tabs</strong>, one per line: \
         a tab's exact name, or <code>mcp/</code> and a path for a managed tab and the tabs below it</label><br>\
         <textarea name=\"tab_list\" rows=\"3\" cols=\"40\" aria-label=\"Tabs to allow, one per line\">{typed}</textarea>\
         <br><small>The app cannot see, search or write any other tab; to it they do not exist.</small>\
         </fieldset>",
        all = checked(c.tabs, "all"),
        managed = checked(c.tabs, "managed"),
        list = checked(c.tabs, "list"),
        typed = escape(c.tab_list),
    )
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
    let local = url::Url::parse(c.redirect_uri).is_ok_and(|u| crate::public::is_loopback(&u));
    let body = format!(
        "<p>{who} asks to use your CopyQ clipboard history through copyq-mcp.</p>\
         <p>When you decide, your browser goes back to <strong>{host}</strong>{local}:<br><code class=\"url\">{redirect}</code></p>\
         <form method=\"post\" action=\"/authorize\">\
         <input type=\"hidden\" name=\"request_id\" value=\"{rid}\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <fieldset><legend>Access</legend>\
         <label><input type=\"radio\" name=\"role\" value=\"read\"{read}> <strong>Read</strong>: sees the tabs chosen below and their items \
         (with all tabs, <em>your clipboard history included</em>: everything you have copied), and can search them. Changes nothing.</label><br>\
         <label><input type=\"radio\" name=\"role\" value=\"write\"{write}> <strong>Write</strong>: everything Read sees, and may add, \
         change, move and delete items in the tabs under <code>mcp/</code>. Your other tabs stay read-only.</label>\
         </fieldset>{tabs}<p>{redaction}{images}</p>\
         <p>Access lasts {access} at a time, and the app renews it while it uses it; after {refresh} without use it ends. \
         Revoke it at any time on this machine with <code>copyq-mcp clients revoke</code>.</p>{message}\
         <p><label>Owner passphrase <input type=\"password\" name=\"passphrase\" autocomplete=\"current-password\" autofocus></label></p>\
         <button type=\"submit\" name=\"action\" value=\"approve\">Approve</button>\
         <button type=\"submit\" name=\"action\" value=\"deny\">Deny</button></form>",
        who = c.client.html(),
        host = escape(&host),
        local = if local {
            " (an app on this computer)"
        } else {
            ""
        },
        redirect = escape(c.redirect_uri),
        rid = escape(c.request_id),
        csrf = escape(c.csrf),
        read = checked(c.role, "read"),
        write = checked(c.role, "write"),
        tabs = tabs_fieldset(c),
        access = spoken(c.access_ttl),
        refresh = spoken(c.refresh_ttl),
        redaction = redaction(c.redact),
        images = images(c.external_images),
    );
    let mut res = page(status, "Connect an app to CopyQ", &body);
    let cookie = format!(
        "{}={}; Path=/authorize; HttpOnly; SameSite=Strict; Max-Age=600{}",
        csrf_cookie_name(c.request_id),
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
    fn lifetimes_are_spoken() {
        let s = |secs| spoken(Duration::from_secs(secs));
        assert_eq!(
            [s(3600), s(30 * 86400), s(900), s(86400), s(90), s(7200)],
            [
                "1 hour",
                "30 days",
                "15 minutes",
                "1 day",
                "90 seconds",
                "2 hours"
            ]
        );
    }

    #[test]
    fn client_supplied_text_is_escaped() {
        assert_eq!(
            escape("<script>\"x\"&'"),
            "&lt;script&gt;&quot;x&quot;&amp;&#39;"
        );
    }
}
