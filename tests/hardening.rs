//! Exposure beyond loopback: foreign Origins are refused on every route, each token has its own rate
//! limit (one busy client cannot starve another), and oversized bodies are refused.

mod support;

use serde_json::{Value, json};
use support::*;

fn list() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
}

async fn post_with_origin(url: &str, token: &str, origin: Option<&str>) -> u16 {
    let mut req = reqwest::Client::new()
        .post(url)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(list().to_string());
    if let Some(o) = origin {
        req = req.header("origin", o);
    }
    req.send().await.expect("http").status().as_u16()
}

#[tokio::test]
async fn foreign_origins_are_refused_everywhere() {
    let gw = gateway_with(copyq(), |s| {
        s.server.allowed_origins = vec!["https://app.example".into()]
    })
    .await;
    assert_eq!(post_with_origin(&gw.url, &gw.read, None).await, 200);
    assert_eq!(
        post_with_origin(&gw.url, &gw.read, Some("http://localhost:6274")).await,
        200
    );
    assert_eq!(
        post_with_origin(&gw.url, &gw.read, Some(&gw.base)).await,
        200
    );
    assert_eq!(
        post_with_origin(&gw.url, &gw.read, Some("https://app.example")).await,
        200
    );
    assert_eq!(
        post_with_origin(&gw.url, &gw.read, Some("https://evil.example")).await,
        403
    );
    assert_eq!(post_with_origin(&gw.url, &gw.read, Some("null")).await, 403);
    let res = reqwest::Client::new()
        .post(format!("{}/register", gw.base))
        .header("origin", "https://evil.example")
        .json(&json!({"redirect_uris": ["http://127.0.0.1:1/cb"], "token_endpoint_auth_method": "none"}))
        .send()
        .await
        .expect("http");
    assert_eq!(res.status().as_u16(), 403, "the OAuth routes too");
}

#[tokio::test]
async fn each_token_has_its_own_rate_limit() {
    let gw = gateway_with(copyq(), |s| {
        s.limits.requests_per_minute = 30;
        s.limits.burst = 3;
    })
    .await;
    for _ in 0..3 {
        assert_eq!(raw_post(&gw.url, Some(&gw.read), list()).await.0, 200);
    }
    let (status, headers, _) = raw_post(&gw.url, Some(&gw.read), list()).await;
    assert_eq!(status, 429);
    let retry: u64 = headers["retry-after"]
        .to_str()
        .ok()
        .and_then(|v| v.parse().ok())
        .expect("Retry-After");
    assert!((1..=2).contains(&retry), "{retry}");
    // The misbehaving token does not starve another client.
    assert_eq!(raw_post(&gw.url, Some(&gw.write), list()).await.0, 200);
    // Bad tokens are refused before they can use up anyone's budget.
    assert_eq!(raw_post(&gw.url, Some("garbage"), list()).await.0, 401);
}

#[tokio::test]
async fn oversized_bodies_are_refused() {
    let gw = gateway_with(copyq(), |s| {
        s.server.max_body_bytes = 64 * 1024;
        s.limits.max_form_bytes = 4096;
    })
    .await;
    let huge = "x".repeat(100 * 1024);
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "mcp_read", "arguments": {"mode": "search", "query": huge}}});
    assert_eq!(raw_post(&gw.url, Some(&gw.read), call).await.0, 413);
    let res = reqwest::Client::new()
        .post(format!("{}/register", gw.base))
        .json(
            &json!({"redirect_uris": ["http://127.0.0.1:1/cb"], "client_name": "y".repeat(10_000)}),
        )
        .send()
        .await
        .expect("http");
    assert_eq!(res.status().as_u16(), 413);
}
