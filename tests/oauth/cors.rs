//! CORS, opt-in through `server.allowed_origins`: preflights answered without a token on every
//! route a browser-based MCP client uses, the MCP headers allowed and `WWW-Authenticate` /
//! `Mcp-Session-Id` exposed, nothing for an origin not listed, and `*` never with credentials.
//! The same from a real page in headless Chromium is in tests/browser.rs.

use super::*;

const APP: &str = "https://app.example";
const PATHS: [&str; 6] = [
    "/mcp",
    "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-authorization-server",
    "/register",
    "/token",
    "/revoke",
];

async fn preflight(gw: &Gateway, path: &str, origin: &str) -> reqwest::Response {
    http()
        .request(reqwest::Method::OPTIONS, format!("{}{path}", gw.base))
        .header("origin", origin)
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization, content-type, mcp-protocol-version, mcp-session-id, mcp-method, mcp-name, last-event-id",
        )
        .send()
        .await
        .expect("preflight")
}

fn header<'a>(res: &'a reqwest::Response, name: &str) -> Option<&'a str> {
    res.headers().get(name).and_then(|v| v.to_str().ok())
}

#[tokio::test]
async fn listed_origins_get_cors_without_a_token() {
    let gw = oauth_gateway(|s| s.server.allowed_origins = vec![APP.into()]).await;
    for path in PATHS {
        let res = preflight(&gw, path, APP).await;
        assert_eq!(res.status(), 200, "{path}");
        assert_eq!(
            header(&res, "access-control-allow-origin"),
            Some(APP),
            "{path}"
        );
        assert_eq!(header(&res, "access-control-allow-credentials"), None);
        let allowed = header(&res, "access-control-allow-headers").unwrap_or_default();
        for h in [
            "authorization",
            "content-type",
            "mcp-protocol-version",
            "mcp-session-id",
            "mcp-method",
            "mcp-name",
            "last-event-id",
        ] {
            assert!(allowed.contains(h), "{path}: {h} not in {allowed}");
        }
    }
    // The 401 a browser client starts from can be read, challenge included.
    let res = http()
        .post(&gw.url)
        .header("origin", APP)
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .expect("post");
    assert_eq!(res.status(), 401);
    assert_eq!(header(&res, "access-control-allow-origin"), Some(APP));
    let exposed = header(&res, "access-control-expose-headers").unwrap_or_default();
    assert!(
        exposed.contains("www-authenticate") && exposed.contains("mcp-session-id"),
        "{exposed}"
    );
    // A tool call with a token, from the page.
    let res = http()
        .post(&gw.url)
        .header("origin", APP)
        .bearer_auth(&gw.read)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .send()
        .await
        .expect("post");
    assert_eq!(res.status(), 200);
    assert_eq!(header(&res, "access-control-allow-origin"), Some(APP));
}

#[tokio::test]
async fn other_origins_get_nothing() {
    let gw = oauth_gateway(|s| s.server.allowed_origins = vec![APP.into()]).await;
    // A loopback page passes the Origin check (a local tool may call the gateway) but, not being
    // listed, gets no CORS headers: its browser keeps the answer from it.
    let res = preflight(&gw, "/mcp", "http://localhost:9999").await;
    assert_eq!(header(&res, "access-control-allow-origin"), None);
    // A foreign origin is refused outright.
    let res = preflight(&gw, "/mcp", "https://evil.example").await;
    assert_eq!(res.status(), 403);
    assert_eq!(header(&res, "access-control-allow-origin"), None);
    // With no origin configured (the default) there is no CORS at all.
    let plain = oauth_gateway(|_| {}).await;
    let res = preflight(&plain, "/mcp", "http://localhost:9999").await;
    assert_eq!(header(&res, "access-control-allow-origin"), None);
}

#[tokio::test]
async fn a_wildcard_never_comes_with_credentials() {
    let gw = oauth_gateway(|s| s.server.allowed_origins = vec!["*".into()]).await;
    let res = preflight(&gw, "/mcp", "https://anywhere.example").await;
    assert_eq!(header(&res, "access-control-allow-origin"), Some("*"));
    assert_eq!(header(&res, "access-control-allow-credentials"), None);
}

/// Not only preflights: an unlisted origin's real requests (a tool call with a valid token, the
/// 401 a client starts from, the discovery documents) never carry its origin back, whichever of
/// the Origin checks let it through, so its page can read none of them.
#[tokio::test]
async fn an_unlisted_origin_is_never_echoed() {
    let gw = oauth_gateway(|s| s.server.allowed_origins = vec![APP.into()]).await;
    for origin in [
        "http://localhost:9999",
        "http://127.0.0.1:9999",
        "https://app.example:8443",
        "https://app.example.evil",
    ] {
        let with_token = http()
            .post(&gw.url)
            .header("origin", origin)
            .bearer_auth(&gw.read)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string());
        let without = http()
            .post(&gw.url)
            .header("origin", origin)
            .header("content-type", "application/json")
            .body("{}");
        let discovery = http()
            .get(format!(
                "{}/.well-known/oauth-authorization-server",
                gw.base
            ))
            .header("origin", origin);
        for req in [with_token, without, discovery] {
            let res = req.send().await.expect("request");
            let status = res.status();
            assert_eq!(
                header(&res, "access-control-allow-origin"),
                None,
                "{origin}: {status}"
            );
        }
    }
}
