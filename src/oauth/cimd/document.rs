//! What a client-ID metadata document must be: the form of its URL (the client id), its content,
//! and how long the answer that carried it may be cached.

use std::time::Duration;

use serde_json::Value;
use url::Url;

use super::{CimdError, Document};

const DEFAULT_TTL: Duration = Duration::from_secs(5 * 60);
const MAX_TTL: Duration = Duration::from_secs(24 * 3600);

/// Checks the client id's form: `https`, a host, a path other than `/`, no fragment, no user
/// info, no dot segments.
pub(super) fn document_url(client_id: &str) -> Result<Url, CimdError> {
    let url = Url::parse(client_id).map_err(|_| CimdError::BadUrl("not a URL"))?;
    if url.scheme() != "https" {
        return Err(CimdError::BadUrl("it must be https"));
    }
    if url.host().is_none() {
        return Err(CimdError::BadUrl("it has no host"));
    }
    if url.fragment().is_some() || !url.username().is_empty() || url.password().is_some() {
        return Err(CimdError::BadUrl("it has a fragment or user info"));
    }
    if url.path() == "/" {
        return Err(CimdError::BadUrl("it has no path"));
    }
    // The parser removes dot segments: a URL that changed by parsing had some.
    if url.as_str() != client_id {
        return Err(CimdError::BadUrl("it is not in normal form"));
    }
    Ok(url)
}

pub(super) fn parse(url: &Url, body: &[u8]) -> Result<Document, CimdError> {
    let bad = |why: &str| CimdError::Invalid(why.to_owned());
    let v: Value = serde_json::from_slice(body).map_err(|_| bad("not JSON"))?;
    if v.get("client_id").and_then(Value::as_str) != Some(url.as_str()) {
        return Err(bad("its client_id is not its own URL"));
    }
    let redirect_uris: Vec<String> = match v.get("redirect_uris") {
        Some(Value::Array(items)) if !items.is_empty() => items
            .iter()
            .map(|i| i.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .ok_or_else(|| bad("redirect_uris must be strings"))?,
        _ => return Err(bad("it lists no redirect_uris")),
    };
    match v.get("token_endpoint_auth_method").and_then(Value::as_str) {
        None | Some("none") => {}
        Some(_) => {
            return Err(bad(
                "only public clients (token_endpoint_auth_method none) are supported",
            ));
        }
    }
    if v.get("client_secret").is_some() {
        return Err(bad("a metadata document must not hold a client_secret"));
    }
    let name = v
        .get("client_name")
        .and_then(Value::as_str)
        .map(super::super::register::clean_name)
        .transpose()
        .map_err(|why| bad(&why))?;
    Ok(Document {
        client_id: url.as_str().to_owned(),
        host: url.host_str().unwrap_or_default().to_owned(),
        name,
        redirect_uris,
    })
}

/// How long a response may be cached: `None` for `no-store`/`no-cache`/`max-age=0`.
pub(super) fn cache_ttl(headers: &hyper::HeaderMap) -> Option<Duration> {
    let Some(cc) = headers
        .get(hyper::header::CACHE_CONTROL)
        .and_then(|v| v.to_str().ok())
    else {
        return Some(DEFAULT_TTL);
    };
    let mut ttl = DEFAULT_TTL;
    for directive in cc.split(',').map(|d| d.trim().to_ascii_lowercase()) {
        if directive == "no-store" || directive == "no-cache" || directive == "private" {
            return None;
        }
        if let Some(age) = directive.strip_prefix("max-age=") {
            match age.trim_matches('"').parse::<u64>() {
                Ok(0) | Err(_) => return None,
                Ok(secs) => ttl = Duration::from_secs(secs).min(MAX_TTL),
            }
        }
    }
    Some(ttl)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_urls() {
        assert!(document_url("https://claude.ai/oauth/mcp-oauth-client-metadata").is_ok());
        for bad in [
            "http://claude.ai/oauth/x",
            "https://claude.ai/",
            "https://claude.ai",
            "https://claude.ai/a/../b",
            "https://claude.ai/x#frag",
            "https://user@claude.ai/x",
            "https:///x",
            "not a url",
        ] {
            assert!(document_url(bad).is_err(), "{bad}");
        }
    }

    fn url() -> Url {
        Url::parse("https://claude.ai/oauth/mcp-oauth-client-metadata").unwrap()
    }

    #[test]
    fn documents() {
        let good = br#"{"client_id":"https://claude.ai/oauth/mcp-oauth-client-metadata","client_name":"Claude","redirect_uris":["https://claude.ai/api/mcp/auth_callback"],"token_endpoint_auth_method":"none"}"#;
        assert_eq!(
            parse(&url(), good),
            Ok(Document {
                client_id: url().to_string(),
                host: "claude.ai".into(),
                name: Some("Claude".into()),
                redirect_uris: vec!["https://claude.ai/api/mcp/auth_callback".into()],
            })
        );
        let cases: [(&[u8], &str); 6] = [
            (
                br#"{"client_id":"https://evil.example/x","redirect_uris":["https://a/cb"]}"#,
                "its client_id is not its own URL",
            ),
            (
                br#"{"client_id":"https://claude.ai/oauth/mcp-oauth-client-metadata"}"#,
                "it lists no redirect_uris",
            ),
            (
                br#"{"client_id":"https://claude.ai/oauth/mcp-oauth-client-metadata","redirect_uris":["https://a/cb"],"token_endpoint_auth_method":"client_secret_basic"}"#,
                "only public clients (token_endpoint_auth_method none) are supported",
            ),
            (
                br#"{"client_id":"https://claude.ai/oauth/mcp-oauth-client-metadata","redirect_uris":[1]}"#,
                "redirect_uris must be strings",
            ),
            (
                "{\"client_id\":\"https://claude.ai/oauth/mcp-oauth-client-metadata\",\"redirect_uris\":[\"https://a/cb\"],\"client_name\":\"Cla\u{202e}ude\"}".as_bytes(),
                "client_name holds an invisible or direction-changing character (U+202E)",
            ),
            (b"[]", "its client_id is not its own URL"),
        ];
        for (body, why) in cases {
            assert_eq!(
                parse(&url(), body),
                Err(CimdError::Invalid(why.into())),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn cache_headers() {
        let h = |v: &str| {
            let mut m = hyper::HeaderMap::new();
            m.insert(hyper::header::CACHE_CONTROL, v.parse().unwrap());
            m
        };
        assert_eq!(cache_ttl(&hyper::HeaderMap::new()), Some(DEFAULT_TTL));
        assert_eq!(
            cache_ttl(&h("public, max-age=600")),
            Some(Duration::from_secs(600))
        );
        assert_eq!(cache_ttl(&h("max-age=99999999")), Some(MAX_TTL));
        assert_eq!(cache_ttl(&h("no-store")), None);
        assert_eq!(cache_ttl(&h("max-age=0")), None);
        assert_eq!(cache_ttl(&h("no-cache")), None);
    }
}
