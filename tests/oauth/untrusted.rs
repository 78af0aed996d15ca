//! Forwarded headers are a trusted proxy's word only: from any other peer (with
//! `server.trusted_proxies` naming some other address) `X-Forwarded-For` does not make a new
//! client for the per-address limits, and `X-Forwarded-Host` / `-Proto` do not name the base.
//! The same headers from a proxy in the list count (tests/oauth/abuse.rs, main.rs).

use super::*;

/// Trusting a proxy at an address this test is not at, with a registry of its own in `dir` (the
/// registrations here would count against the sibling suites' share of the shared one).
async fn behind_another_proxy(dir: &tempfile::TempDir) -> Gateway {
    let data_dir = dir.path().display().to_string();
    oauth_gateway(|s| {
        s.data_dir = data_dir;
        s.server.trusted_proxies = vec!["192.0.2.1".into()];
        s.server.allowed_hosts = vec!["copyq.example.com".into()];
    })
    .await
}

/// Registrations are limited per address (ten in two minutes): an untrusted peer naming a new
/// `X-Forwarded-For` each time is still one address, and its eleventh is refused. Each asks for
/// another app (its own name): a loopback peer repeating one registration takes its earlier one
/// over instead of counting (tests/oauth/reconnect.rs), which is not what this is about.
#[tokio::test]
async fn an_untrusted_peers_forwarded_for_is_not_another_client() {
    let dir = tempfile::tempdir().expect("data dir");
    let gw = behind_another_proxy(&dir).await;
    for i in 0..10 {
        let from = format!("203.0.113.{}", 20 + i);
        assert_eq!(
            register_as(&gw, &from, &format!("junk {i}")).await.status(),
            201,
            "{from}"
        );
    }
    assert_eq!(
        register_as(&gw, "203.0.113.99", "junk 99").await.status(),
        429
    );
}

async fn register_as(gw: &Gateway, from: &str, name: &str) -> reqwest::Response {
    http()
        .post(format!("{}/register", gw.base))
        .header("x-forwarded-for", from)
        .json(&json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none", "client_name": name}))
        .send()
        .await
        .expect("register")
}

/// The discovery documents name the base the gateway was reached under, not the one an untrusted
/// peer's forwarded headers claim.
#[tokio::test]
async fn an_untrusted_peers_forwarded_host_does_not_name_the_base() {
    let dir = tempfile::tempdir().expect("data dir");
    let gw = behind_another_proxy(&dir).await;
    let issuer: Value = http()
        .get(format!(
            "{}/.well-known/oauth-authorization-server",
            gw.base
        ))
        .header("x-forwarded-host", "copyq.example.com")
        .header("x-forwarded-proto", "https")
        .header("x-forwarded-for", "203.0.113.7")
        .send()
        .await
        .expect("as")
        .json()
        .await
        .expect("json");
    assert_eq!(issuer["issuer"], json!(gw.base));
    let resource: Value = http()
        .get(format!(
            "{}/.well-known/oauth-protected-resource/mcp",
            gw.base
        ))
        .header("x-forwarded-host", "copyq.example.com")
        .header("x-forwarded-proto", "https")
        .send()
        .await
        .expect("prm")
        .json()
        .await
        .expect("json");
    assert_eq!(resource["resource"], json!(format!("{}/mcp", gw.base)));
}
