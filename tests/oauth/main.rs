//! The OAuth 2.1 authorization server over real HTTP: discovery from a bare 401, registration,
//! consent with the owner's passphrase, PKCE, token issue and rotation, revocation, and every
//! refusal the spec and the issue name. The third-party client runs in tests/gateway/clients.rs.
//! No CopyQ runs for these suites (an in-memory backend, or a `serve` pointed at no CopyQ), but
//! for scopes.rs, whose tokens read tabs through the tools.

#[path = "../support/mod.rs"]
mod support;

mod abuse;
mod browsers;
mod cimd;
mod cors;
mod crowd;
mod reconnect;
mod scopes;
mod state;
mod unreachable;
mod untrusted;

use std::collections::HashMap;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use copyq_mcp::oauth::passphrase;
use copyq_mcp::store::Store;
use reqwest::redirect::Policy;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use support::*;

const PASS: &str = "correct horse battery staple";
const REDIRECT: &str = "http://127.0.0.1:4567/callback";
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .expect("client")
}

/// A gateway with the owner's passphrase set, over no CopyQ: the authorization server never
/// reads the clipboard (scopes.rs, whose tokens read tabs, puts one in front of CopyQ).
async fn oauth_gateway(tweak: impl FnOnce(&mut copyq_mcp::config::Settings)) -> Gateway {
    with_passphrase(edge_gateway_with(tweak).await)
}

fn with_passphrase(gw: Gateway) -> Gateway {
    let store = Store::open(&gw.settings.data_dir()).expect("store");
    store
        .set_passphrase_hash(&passphrase::hash(PASS).expect("hash"))
        .expect("passphrase");
    gw
}

fn challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

async fn register(gw: &Gateway, body: Value) -> (u16, Value) {
    let res = http()
        .post(format!("{}/register", gw.base))
        .json(&body)
        .send()
        .await
        .expect("register");
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

/// A new app of its own. Each call registers one more redirect URI no other call does: the
/// gateway takes over an earlier identical registration from loopback (`oauth/register/again.rs`),
/// and these are meant to be distinct apps.
async fn public_client(gw: &Gateway) -> String {
    static APPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = APPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let own = format!("{REDIRECT}/app-{n}");
    let (status, v) = register(gw, json!({"redirect_uris": [REDIRECT, own], "token_endpoint_auth_method": "none", "client_name": "Test <b>app</b>"})).await;
    assert_eq!(status, 201, "{v}");
    v["client_id"].as_str().expect("client_id").to_owned()
}

/// GET /authorize: (status, body, the csrf cookie).
async fn authorize(
    gw: &Gateway,
    params: &[(&str, &str)],
) -> (u16, String, Option<String>, Option<String>) {
    let res = http()
        .get(format!("{}/authorize", gw.base))
        .query(params)
        .send()
        .await
        .expect("authorize");
    let status = res.status().as_u16();
    let location = res
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    let cookie = res
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .map(String::from);
    (
        status,
        res.text().await.unwrap_or_default(),
        cookie.or(location.clone()),
        location,
    )
}

fn field(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html
        .find(&marker)
        .map(|i| i + marker.len())
        .expect("field in the consent page");
    html[start..]
        .split('"')
        .next()
        .unwrap_or_default()
        .to_owned()
}

fn auth_params<'a>(client_id: &'a str, challenge: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", REDIRECT),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
        ("state", "st4te"),
    ]
}

/// POST the consent form: (status, Location).
async fn consent(
    gw: &Gateway,
    html: &str,
    cookie: &str,
    pass: &str,
    role: &str,
    action: &str,
) -> (u16, Option<String>) {
    let res = post_consent(
        gw,
        html,
        cookie,
        &[("passphrase", pass), ("role", role), ("action", action)],
    )
    .await;
    (res.status().as_u16(), location(&res))
}

/// POST the consent page's form (its request id and CSRF field) with `fields`.
async fn post_consent(
    gw: &Gateway,
    html: &str,
    cookie: &str,
    fields: &[(&str, &str)],
) -> reqwest::Response {
    let mut form = vec![
        ("request_id", field(html, "request_id")),
        ("csrf", field(html, "csrf")),
    ];
    form.extend(fields.iter().map(|(k, v)| (*k, (*v).to_owned())));
    http()
        .post(format!("{}/authorize", gw.base))
        .header("cookie", cookie)
        .form(&form)
        .send()
        .await
        .expect("consent")
}

fn location(res: &reqwest::Response) -> Option<String> {
    res.headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .map(String::from)
}

fn query(location: &str) -> HashMap<String, String> {
    url::Url::parse(location)
        .expect("location")
        .query_pairs()
        .into_owned()
        .collect()
}

/// Run authorize + consent; the code.
async fn code_for(gw: &Gateway, client_id: &str, role: &str) -> String {
    let ch = challenge(VERIFIER);
    let (status, html, cookie, _) = authorize(gw, &auth_params(client_id, &ch)).await;
    assert_eq!(status, 200, "{html}");
    let (status, location) = consent(
        gw,
        &html,
        &cookie.expect("csrf cookie"),
        PASS,
        role,
        "approve",
    )
    .await;
    assert_eq!(status, 303);
    let q = query(&location.expect("redirect"));
    assert_eq!(q.get("state").map(String::as_str), Some("st4te"));
    assert_eq!(q.get("iss"), Some(&gw.base));
    q["code"].clone()
}

async fn token(gw: &Gateway, form: &[(&str, &str)]) -> (u16, Value, Option<String>) {
    let res = http()
        .post(format!("{}/token", gw.base))
        .form(form)
        .send()
        .await
        .expect("token");
    let cache = res
        .headers()
        .get("cache-control")
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
        cache,
    )
}

async fn exchange(gw: &Gateway, client_id: &str, code: &str, verifier: &str) -> (u16, Value) {
    let (s, v, _) = token(
        gw,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
            ("client_id", client_id),
            ("code_verifier", verifier),
        ],
    )
    .await;
    (s, v)
}

async fn mcp_status(gw: &Gateway, access: &str) -> u16 {
    raw_post(
        &gw.url,
        Some(access),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await
    .0
}

#[tokio::test]
async fn discovery_starts_from_a_bare_401() {
    let gw = oauth_gateway(|_| {}).await;
    let (status, headers, _) = raw_post(
        &gw.url,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    assert_eq!(status, 401);
    let metadata_url = format!("{}/.well-known/oauth-protected-resource/mcp", gw.base);
    assert_eq!(
        headers["www-authenticate"].to_str().ok(),
        Some(format!("Bearer resource_metadata=\"{metadata_url}\"").as_str())
    );
    for url in [
        metadata_url,
        format!("{}/.well-known/oauth-protected-resource", gw.base),
    ] {
        let prm: Value = http()
            .get(&url)
            .send()
            .await
            .expect("prm")
            .json()
            .await
            .expect("json");
        assert_eq!(prm["resource"], json!(gw.url));
        assert_eq!(prm["authorization_servers"], json!([gw.base]));
    }
    let asm: Value = http()
        .get(format!(
            "{}/.well-known/oauth-authorization-server",
            gw.base
        ))
        .send()
        .await
        .expect("as")
        .json()
        .await
        .expect("json");
    assert_eq!(asm["issuer"], json!(gw.base));
    assert_eq!(asm["token_endpoint"], json!(format!("{}/token", gw.base)));
    assert_eq!(asm["code_challenge_methods_supported"], json!(["S256"]));
    assert!(
        asm["token_endpoint_auth_methods_supported"]
            .as_array()
            .is_some_and(|m| m.contains(&json!("none")))
    );
    assert_eq!(
        asm["grant_types_supported"],
        json!(["authorization_code", "refresh_token"])
    );
}

#[tokio::test]
async fn public_url_is_used_everywhere() {
    let gw = oauth_gateway(|s| s.server.public_url = "https://copyq.example.com/".into()).await;
    let asm: Value = http()
        .get(format!(
            "{}/.well-known/oauth-authorization-server",
            gw.base
        ))
        .send()
        .await
        .expect("as")
        .json()
        .await
        .expect("json");
    assert_eq!(asm["issuer"], json!("https://copyq.example.com"));
    assert_eq!(
        asm["authorization_endpoint"],
        json!("https://copyq.example.com/authorize")
    );
    let (_, headers, _) = raw_post(&gw.url, None, json!({})).await;
    assert!(
        headers["www-authenticate"]
            .to_str()
            .unwrap_or("")
            .contains("https://copyq.example.com/.well-known/oauth-protected-resource/mcp")
    );
}

/// Behind a trusted proxy without a public URL, the base is the one the proxy was reached under
/// (`X-Forwarded-Proto`, `X-Forwarded-Host` or `Host`), for an allowed host name; a token issued
/// under it works; nobody else's forwarded headers, nor the gateway's own internal one, count.
#[tokio::test]
async fn a_trusted_proxys_forwarded_proto_and_host_name_the_base() {
    let gw = oauth_gateway(|s| {
        s.server.trusted_proxies = vec!["127.0.0.1".into()];
        s.server.allowed_hosts = vec!["copyq.example.com".into()];
    })
    .await;
    let issuer = |headers: &'static [(&'static str, &'static str)]| {
        let gw = &gw;
        async move {
            let mut req = http().get(format!(
                "{}/.well-known/oauth-authorization-server",
                gw.base
            ));
            for (k, v) in headers {
                req = req.header(*k, *v);
            }
            let v: Value = req.send().await.expect("as").json().await.expect("json");
            v["issuer"].as_str().unwrap_or_default().to_owned()
        }
    };
    assert_eq!(
        issuer(&[
            ("host", "copyq.example.com"),
            ("x-forwarded-proto", "https")
        ])
        .await,
        "https://copyq.example.com"
    );
    assert_eq!(
        issuer(&[
            ("x-forwarded-host", "copyq.example.com"),
            ("x-forwarded-proto", "https")
        ])
        .await,
        "https://copyq.example.com"
    );
    let bound = gw.base.clone();
    for ignored in [
        &[
            ("x-forwarded-host", "evil.example"),
            ("x-forwarded-proto", "https"),
        ][..],
        &[("x-copyq-mcp-forwarded-base", "https://copyq.example.com")][..],
        &[("host", "copyq.example.com")][..],
    ] {
        assert_eq!(issuer(ignored).await, bound, "{ignored:?}");
    }
    // An access token issued through the proxy is for the resource under its base, and works.
    let client_id = public_client(&gw).await;
    // The consent page answered under the https base sets its CSRF cookie `Secure`; under the
    // gateway's own http base, not (the browser would drop it).
    let ch = challenge(VERIFIER);
    let cookie = |res: reqwest::Response| {
        res.headers()
            .get("set-cookie")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let page = |proxied: bool| {
        let mut req = http()
            .get(format!("{}/authorize", gw.base))
            .query(&auth_params(&client_id, &ch));
        if proxied {
            req = req
                .header("host", "copyq.example.com")
                .header("x-forwarded-proto", "https");
        }
        req.send()
    };
    assert!(cookie(page(true).await.expect("page")).ends_with("; Secure"));
    assert!(!cookie(page(false).await.expect("page")).contains("Secure"));
    let code = code_for(&gw, &client_id, "read").await;
    let tokens: Value = http()
        .post(format!("{}/token", gw.base))
        .header("host", "copyq.example.com")
        .header("x-forwarded-proto", "https")
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", REDIRECT),
            ("client_id", client_id.as_str()),
            ("code_verifier", VERIFIER),
        ])
        .send()
        .await
        .expect("token")
        .json()
        .await
        .expect("json");
    let access = tokens["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("{tokens}"));
    let claims = access.split('.').nth(1).expect("payload");
    let claims: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).expect("base64")).expect("json");
    assert_eq!(claims["aud"], json!("https://copyq.example.com/mcp"));
    assert_eq!(mcp_status(&gw, access).await, 200);
}

/// The same proxy headers from a client that is not a trusted proxy change nothing.
#[tokio::test]
async fn an_untrusted_peers_forwarded_headers_change_nothing() {
    let gw = oauth_gateway(|s| s.server.allowed_hosts = vec!["copyq.example.com".into()]).await;
    let v: Value = http()
        .get(format!(
            "{}/.well-known/oauth-protected-resource/mcp",
            gw.base
        ))
        .header("host", "copyq.example.com")
        .header("x-forwarded-proto", "https")
        .send()
        .await
        .expect("prm")
        .json()
        .await
        .expect("json");
    assert_eq!(v["resource"], json!(format!("{}/mcp", gw.base)));
}

#[tokio::test]
async fn full_flow_refresh_rotation_and_reuse() {
    let gw = oauth_gateway(|_| {}).await;
    let client_id = public_client(&gw).await;
    let code = code_for(&gw, &client_id, "write").await;
    let (status, tokens) = exchange(&gw, &client_id, &code, VERIFIER).await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(tokens["token_type"], json!("Bearer"));
    assert_eq!(tokens["scope"], json!("write"));
    assert_eq!(tokens["expires_in"], json!(3600));
    let access = tokens["access_token"].as_str().expect("access").to_owned();
    let refresh1 = tokens["refresh_token"]
        .as_str()
        .expect("refresh")
        .to_owned();
    let c = client(&gw.url, &access).await;
    let names: Vec<String> = c
        .list_all_tools()
        .await
        .expect("list")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(
        names,
        ["mcp_read", "mcp_write", "mcp_validate"],
        "a write grant sees mcp_write"
    );
    drop(c);

    let (status, v, cache) = token(
        &gw,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh1),
            ("client_id", &client_id),
        ],
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(cache.as_deref(), Some("no-store"));
    let access2 = v["access_token"].as_str().expect("access").to_owned();
    let refresh2 = v["refresh_token"].as_str().expect("refresh").to_owned();
    assert_ne!(refresh1, refresh2, "refresh tokens rotate");
    assert_eq!(mcp_status(&gw, &access2).await, 200);

    // Reusing the first refresh token revokes the whole grant.
    let (status, v, _) = token(
        &gw,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh1),
            ("client_id", &client_id),
        ],
    )
    .await;
    assert_eq!((status, v["error"].as_str()), (400, Some("invalid_grant")));
    assert_eq!(mcp_status(&gw, &access2).await, 401);
    assert_eq!(mcp_status(&gw, &access).await, 401);
    let (status, _, _) = token(
        &gw,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh2),
            ("client_id", &client_id),
        ],
    )
    .await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn read_grant_and_reused_code() {
    let gw = oauth_gateway(|_| {}).await;
    let client_id = public_client(&gw).await;
    let code = code_for(&gw, &client_id, "read").await;
    let (status, tokens) = exchange(&gw, &client_id, &code, VERIFIER).await;
    assert_eq!(status, 200);
    let access = tokens["access_token"].as_str().expect("access").to_owned();
    let c = client(&gw.url, &access).await;
    let names: Vec<String> = c
        .list_all_tools()
        .await
        .expect("list")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["mcp_read", "mcp_validate"]);
    drop(c);
    let (status, v) = exchange(&gw, &client_id, &code, VERIFIER).await;
    assert_eq!((status, v["error"].as_str()), (400, Some("invalid_grant")));
    assert_eq!(
        mcp_status(&gw, &access).await,
        401,
        "code reuse revokes what the code issued"
    );
}

#[tokio::test]
async fn pkce_and_redirect_rules() {
    let gw = oauth_gateway(|_| {}).await;
    let client_id = public_client(&gw).await;
    // Wrong verifier.
    let code = code_for(&gw, &client_id, "read").await;
    let (status, v) = exchange(
        &gw,
        &client_id,
        &code,
        "wrong-verifier-wrong-verifier-wrong-verifier-123",
    )
    .await;
    assert_eq!((status, v["error"].as_str()), (400, Some("invalid_grant")));
    // Missing verifier.
    let code = code_for(&gw, &client_id, "read").await;
    let (s, v, _) = token(
        &gw,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &client_id),
        ],
    )
    .await;
    assert_eq!((s, v["error"].as_str()), (400, Some("invalid_grant")));
    // No PKCE on /authorize: redirected back with an error, state and iss.
    let (status, _, _, location) = authorize(
        &gw,
        &[
            ("response_type", "code"),
            ("client_id", &client_id),
            ("redirect_uri", REDIRECT),
            ("state", "s1"),
        ],
    )
    .await;
    assert_eq!(status, 303);
    let q = query(&location.expect("location"));
    assert_eq!(q["error"], "invalid_request");
    assert_eq!(
        (q["state"].as_str(), q["iss"].as_str()),
        ("s1", gw.base.as_str())
    );
    // plain PKCE is refused too.
    let ch = challenge(VERIFIER);
    let mut plain = auth_params(&client_id, &ch);
    plain[4] = ("code_challenge_method", "plain");
    assert_eq!(
        query(&authorize(&gw, &plain).await.3.expect("location"))["error"],
        "invalid_request"
    );
    // A redirect URI that was not registered: shown on the page, never redirected.
    let mut other = auth_params(&client_id, &ch);
    other[2] = ("redirect_uri", "http://127.0.0.1:9999/elsewhere");
    let (status, html, _, location) = authorize(&gw, &other).await;
    assert_eq!((status, location), (400, None));
    assert!(
        html.contains("The address this app wants to send you back to is not one it registered"),
        "{html}"
    );
    // Unknown client: page, no redirect.
    let (status, _, _, location) = authorize(&gw, &auth_params("nobody", &ch)).await;
    assert_eq!((status, location), (400, None));
    // A resource that is not this server.
    let mut elsewhere = auth_params(&client_id, &ch);
    elsewhere.push(("resource", "https://other.example/mcp"));
    assert_eq!(
        query(&authorize(&gw, &elsewhere).await.3.expect("location"))["error"],
        "invalid_target"
    );
}

#[tokio::test]
async fn consent_refusals() {
    let gw = oauth_gateway(|_| {}).await;
    let client_id = public_client(&gw).await;
    let ch = challenge(VERIFIER);
    let (_, html, cookie, _) = authorize(&gw, &auth_params(&client_id, &ch)).await;
    let cookie = cookie.expect("cookie");
    assert!(
        html.contains("Test &lt;b&gt;app&lt;/b&gt;") && html.contains(REDIRECT),
        "names the client (escaped) and the redirect"
    );
    assert!(
        html.contains("name=\"role\" value=\"read\" checked")
            && html.contains("type=\"password\" name=\"passphrase\"")
    );
    // No CSRF cookie: refused.
    let (status, _) = consent(&gw, &html, "other=1", PASS, "write", "approve").await;
    assert_eq!(status, 403);
    // Wrong passphrases: refused; the fifth cancels the request (abuse.rs has the rest).
    for _ in 0..5 {
        assert_eq!(
            consent(&gw, &html, &cookie, "wrong passphrase!", "write", "approve").await,
            (401, None)
        );
    }
    assert_eq!(
        consent(&gw, &html, &cookie, PASS, "write", "approve")
            .await
            .0,
        400,
        "the request is gone, even for the right passphrase"
    );
    // Deny.
    let gw = oauth_gateway(|_| {}).await;
    let client_id = public_client(&gw).await;
    let (_, html, cookie, _) = authorize(&gw, &auth_params(&client_id, &ch)).await;
    let (status, location) =
        consent(&gw, &html, &cookie.expect("cookie"), "", "read", "deny").await;
    assert_eq!(status, 303);
    assert_eq!(
        query(&location.expect("location"))["error"],
        "access_denied"
    );
}

#[tokio::test]
async fn consent_page_cannot_be_framed() {
    let gw = oauth_gateway(|_| {}).await;
    let client_id = public_client(&gw).await;
    let ch = challenge(VERIFIER);
    let res = http()
        .get(format!("{}/authorize", gw.base))
        .query(&auth_params(&client_id, &ch))
        .send()
        .await
        .expect("authorize");
    assert_eq!(res.headers()["x-frame-options"], "DENY");
    assert!(
        res.headers()["content-security-policy"]
            .to_str()
            .unwrap_or("")
            .contains("frame-ancestors 'none'")
    );
    assert!(
        res.headers()["set-cookie"]
            .to_str()
            .unwrap_or("")
            .contains("SameSite=Strict")
    );
}

#[tokio::test]
async fn registration_rules() {
    let gw = oauth_gateway(|_| {}).await;
    for (body, error) in [
        (
            json!({"redirect_uris": ["https://evil.example/cb"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": ["http://192.168.1.9/cb"]}),
            "invalid_redirect_uri",
        ),
        (json!({"redirect_uris": []}), "invalid_redirect_uri"),
        (json!({"client_name": "x"}), "invalid_redirect_uri"),
        (
            json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt"}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": [REDIRECT], "grant_types": ["password"]}),
            "invalid_client_metadata",
        ),
        (json!("not an object"), "invalid_client_metadata"),
    ] {
        let (status, v) = register(&gw, body.clone()).await;
        assert_eq!((status, v["error"].as_str()), (400, Some(error)), "{body}");
    }
    for uri in [
        "https://claude.ai/api/mcp/auth_callback",
        "https://chatgpt.com/connector_platform_oauth_redirect",
    ] {
        assert_eq!(
            register(
                &gw,
                json!({"redirect_uris": [uri], "token_endpoint_auth_method": "none"})
            )
            .await
            .0,
            201,
            "{uri}"
        );
    }
}

#[tokio::test]
async fn confidential_clients_and_unknown_clients() {
    let gw = oauth_gateway(|_| {}).await;
    let (status, v) = register(
        &gw,
        json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_basic"}),
    )
    .await;
    assert_eq!(status, 201);
    let (id, secret) = (
        v["client_id"].as_str().expect("id").to_owned(),
        v["client_secret"].as_str().expect("secret").to_owned(),
    );
    let code = code_for(&gw, &id, "read").await;
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
    ];
    let wrong = http()
        .post(format!("{}/token", gw.base))
        .basic_auth(&id, Some("wrong"))
        .form(&form)
        .send()
        .await
        .expect("token");
    assert_eq!(wrong.status().as_u16(), 401);
    let code = code_for(&gw, &id, "read").await;
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
    ];
    let ok = http()
        .post(format!("{}/token", gw.base))
        .basic_auth(&id, Some(&secret))
        .form(&form)
        .send()
        .await
        .expect("token");
    assert_eq!(ok.status().as_u16(), 200);
    let (status, v, _) = token(
        &gw,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", "x"),
            ("client_id", "unknown-client"),
        ],
    )
    .await;
    assert_eq!((status, v["error"].as_str()), (401, Some("invalid_client")));
}

#[tokio::test]
async fn expiry_other_resources_and_revocation() {
    let gw = oauth_gateway(|s| s.oauth.access_token_ttl = std::time::Duration::from_secs(1)).await;
    let client_id = public_client(&gw).await;
    let code = code_for(&gw, &client_id, "read").await;
    let (_, tokens) = exchange(&gw, &client_id, &code, VERIFIER).await;
    let access = tokens["access_token"].as_str().expect("access").to_owned();
    let refresh = tokens["refresh_token"]
        .as_str()
        .expect("refresh")
        .to_owned();
    assert_eq!(mcp_status(&gw, &access).await, 200);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_eq!(mcp_status(&gw, &access).await, 401, "expired");
    // A token for another resource.
    let (s, v, _) = token(
        &gw,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh),
            ("client_id", &client_id),
            ("resource", "https://other.example/mcp"),
        ],
    )
    .await;
    assert_eq!((s, v["error"].as_str()), (400, Some("invalid_target")));
    let key = copyq_mcp::auth::load_or_create_key(&gw.settings.signing_key_path()).expect("key");
    // Everything right (key, issuer, this database's epoch) but the audience.
    let epoch = Store::open(&gw.settings.data_dir()).expect("store").epoch();
    let foreign =
        copyq_mcp::auth::TokenService::new(&key, "copyq-mcp", "https://other.example/mcp")
            .expect("svc")
            .with_epoch(epoch.clone())
            .issue("x", copyq_mcp::auth::Role::Write, None)
            .expect("issue");
    let ours = copyq_mcp::auth::TokenService::new(&key, "copyq-mcp", "copyq-mcp")
        .expect("svc")
        .with_epoch(epoch)
        .issue("x", copyq_mcp::auth::Role::Write, None)
        .expect("issue");
    assert_eq!(
        mcp_status(&gw, &ours).await,
        200,
        "the same token for this audience"
    );
    assert_eq!(
        mcp_status(&gw, &foreign).await,
        401,
        "audience of another resource"
    );
    // Revocation endpoint: the refresh token revokes the grant.
    let (s, v, _) = token(
        &gw,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh),
            ("client_id", &client_id),
        ],
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let (access, refresh) = (
        v["access_token"].as_str().unwrap_or("").to_owned(),
        v["refresh_token"].as_str().unwrap_or("").to_owned(),
    );
    let res = http()
        .post(format!("{}/revoke", gw.base))
        .form(&[("token", refresh.as_str()), ("client_id", &client_id)])
        .send()
        .await
        .expect("revoke");
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(mcp_status(&gw, &access).await, 401, "revoked grant");
}

#[tokio::test]
async fn owner_revokes_a_client_and_state_survives_restart() {
    let gw = oauth_gateway(|_| {}).await;
    let client_id = public_client(&gw).await;
    let code = code_for(&gw, &client_id, "write").await;
    let (_, tokens) = exchange(&gw, &client_id, &code, VERIFIER).await;
    let access = tokens["access_token"].as_str().expect("access").to_owned();
    let refresh = tokens["refresh_token"]
        .as_str()
        .expect("refresh")
        .to_owned();
    // A new gateway process on the same data dir and port: nobody has to reconnect.
    let settings = gw.settings.clone();
    let addr = gw.base.trim_start_matches("http://").to_owned();
    drop(gw);
    // The stopped gateway lets go of its port: wait for that, not for a guessed time.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::net::TcpListener::bind(&addr).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "port {addr} still held after 10 s"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let gw = edge_gateway_with(|s| {
        *s = settings;
        s.server.bind = addr.parse().expect("addr");
    })
    .await;
    assert_eq!(
        mcp_status(&gw, &access).await,
        200,
        "access token after restart"
    );
    let (s, v, _) = token(
        &gw,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh),
            ("client_id", &client_id),
        ],
    )
    .await;
    assert_eq!(s, 200, "refresh after restart: {v}");
    let access = v["access_token"].as_str().expect("access").to_owned();
    // The owner disconnects the app from another process: the next request fails.
    Store::open(&gw.settings.data_dir())
        .expect("store")
        .delete_client(&client_id)
        .expect("revoke");
    assert_eq!(mcp_status(&gw, &access).await, 401);
}

/// A code is bound to its client and its redirect URI: presented by another client, or with
/// another redirect URI, it is refused and everything it issued is revoked (the code was stolen).
#[tokio::test]
async fn a_code_is_bound_to_its_client_and_redirect_uri() {
    let gw = oauth_gateway(|_| {}).await;
    let owner = public_client(&gw).await;
    let thief = public_client(&gw).await;
    let code = code_for(&gw, &owner, "write").await;
    let (status, v) = exchange(&gw, &thief, &code, VERIFIER).await;
    assert_eq!(
        (status, v["error"].as_str(), v["error_description"].as_str()),
        (
            400,
            Some("invalid_grant"),
            Some("the code was issued to another client")
        )
    );
    // The code is spent and its grant revoked: the owner cannot use it either now.
    let (status, v) = exchange(&gw, &owner, &code, VERIFIER).await;
    assert_eq!((status, v["error"].as_str()), (400, Some("invalid_grant")));

    let code = code_for(&gw, &owner, "write").await;
    let (status, v, _) = token(
        &gw,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", "http://127.0.0.1:4567/other"),
            ("client_id", &owner),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    assert_eq!(
        (status, v["error"].as_str(), v["error_description"].as_str()),
        (
            400,
            Some("invalid_grant"),
            Some("redirect_uri does not match the authorization request")
        )
    );
    let (status, _) = exchange(&gw, &owner, &code, VERIFIER).await;
    assert_eq!(status, 400, "spent by the mismatched attempt");
    // The right client with the right redirect URI still gets a token.
    let code = code_for(&gw, &owner, "read").await;
    let (status, v) = exchange(&gw, &owner, &code, VERIFIER).await;
    assert_eq!(status, 200, "{v}");
}
