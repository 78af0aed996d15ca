//! Exposure beyond loopback: foreign Origins are refused on every route, each token has its own rate
//! limit and byte volume (one busy client cannot starve another), and oversized bodies are refused.

use crate::support::*;
use serde_json::{Value, json};

/// This suite's own private CopyQ, started on first use: for the health probe alone, which counts
/// the `copyq` processes the CLI backend runs. The rest run over no CopyQ.
fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

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
    let gw =
        edge_gateway_with(|s| s.server.allowed_origins = vec!["https://app.example".into()]).await;
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
    let gw = edge_gateway_with(|s| {
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
async fn each_token_has_a_volume_of_bytes_an_hour() {
    // 40,000 bytes an hour; a burst of one largest body (16 KiB).
    let gw = edge_gateway_with(|s| {
        s.limits.mcp_bytes_per_hour = 40_000;
        s.server.max_body_bytes = 16 * 1024;
    })
    .await;
    let add = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "mcp_write",
        "arguments": {"mode": "add", "tab": "workspace/volume", "text": "v".repeat(6000)}}});
    let statuses = [
        raw_post(&gw.url, Some(&gw.write), add.clone()).await.0,
        raw_post(&gw.url, Some(&gw.write), add.clone()).await.0,
        raw_post(&gw.url, Some(&gw.write), add).await.0,
    ];
    assert_eq!(statuses, [200, 200, 429]);
    assert_eq!(
        raw_post(&gw.url, Some(&gw.read), list()).await.0,
        200,
        "another token"
    );
}

#[tokio::test]
async fn oversized_bodies_are_refused() {
    let gw = edge_gateway_with(|s| {
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

/// Read from `stream` until the server closes it (or `within` passes): whether it closed.
async fn closed_within(stream: &mut tokio::net::TcpStream, within: std::time::Duration) -> bool {
    use tokio::io::AsyncReadExt;
    let mut buf = [0u8; 4096];
    tokio::time::timeout(within, async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .is_ok()
}

/// A connection from `source` (any 127.x address is this machine) to the gateway.
async fn connect_from(source: &str, gw: &Gateway) -> tokio::net::TcpStream {
    let addr: std::net::SocketAddr = gw
        .base
        .split("://")
        .nth(1)
        .and_then(|a| a.parse().ok())
        .expect("gateway address");
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind(format!("{source}:0").parse().expect("source"))
        .expect("bind");
    socket.connect(addr).await.expect("connect")
}

#[tokio::test]
async fn slow_and_idle_connections_are_closed() {
    use tokio::io::AsyncWriteExt;
    let gw = edge_gateway_with(|s| s.limits.header_read_timeout_ms = 300).await;
    let bound = std::time::Duration::from_secs(5);
    // Trickling headers: never a whole request head.
    let mut slow = connect_from("127.0.0.1", &gw).await;
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .expect("write");
    // Idle after one request on a keep-alive connection.
    let mut idle = connect_from("127.0.0.1", &gw).await;
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .expect("write");
    // Connected and silent.
    let mut silent = connect_from("127.0.0.1", &gw).await;
    assert!(
        closed_within(&mut slow, bound).await,
        "a trickling client is cut"
    );
    assert!(
        closed_within(&mut idle, bound).await,
        "an idle keep-alive connection is closed"
    );
    assert!(
        closed_within(&mut silent, bound).await,
        "a silent connection is closed"
    );
}

#[tokio::test]
async fn a_flood_of_connections_is_capped_and_others_are_still_served() {
    let gw = edge_gateway_with(|s| s.limits.max_connections_per_address = 8).await;
    let mut held = Vec::new();
    for _ in 0..8 {
        held.push(connect_from("127.0.0.2", &gw).await);
    }
    // The ninth from that address is closed at once...
    let mut ninth = connect_from("127.0.0.2", &gw).await;
    assert!(
        closed_within(&mut ninth, std::time::Duration::from_secs(5)).await,
        "past the cap"
    );
    // ...while another client is served.
    let res = reqwest::Client::new()
        .get(format!("{}/healthz", gw.base))
        .send()
        .await
        .expect("healthz");
    assert_eq!(res.status(), 200);
    // And a place freed is a place for that address again, once the gateway has seen the close
    // (on a busy machine that can take longer than any fixed wait: retry until a deadline).
    drop(held.pop());
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let mut again = connect_from("127.0.0.2", &gw).await;
        let mut answer = String::new();
        if again
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            .await
            .is_ok()
        {
            let _ = tokio::time::timeout(
                std::time::Duration::from_secs(5),
                again.read_to_string(&mut answer),
            )
            .await;
        }
        if answer.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the freed place was never given back: {answer:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn caps_hold_on_tls_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cert = copyq_mcp::tls::generate(&["127.0.0.1".into()], dir.path()).expect("cert");
    let gw = edge_gateway_with(|s| {
        s.tls.cert = cert.cert.display().to_string();
        s.tls.key = cert.key.display().to_string();
        s.limits.header_read_timeout_ms = 300;
    })
    .await;
    let mut silent = connect_from("127.0.0.3", &gw).await;
    assert!(
        closed_within(&mut silent, std::time::Duration::from_secs(5)).await,
        "a connection that never starts TLS is closed"
    );
    // The cap, with the default 10 s timeout: the third connection is closed long before it.
    let capped = edge_gateway_with(|s| {
        s.tls.cert = cert.cert.display().to_string();
        s.tls.key = cert.key.display().to_string();
        s.limits.max_connections_per_address = 2;
    })
    .await;
    let _a = connect_from("127.0.0.3", &capped).await;
    let _b = connect_from("127.0.0.3", &capped).await;
    let mut c = connect_from("127.0.0.3", &capped).await;
    assert!(closed_within(&mut c, std::time::Duration::from_secs(3)).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_checks_share_one_probe_and_are_limited_per_address() {
    use std::os::unix::fs::PermissionsExt;
    // The CLI backend, through a copyq that counts its runs: each probe is one process.
    let dir = tempfile::tempdir().expect("tempdir");
    let count = dir.path().join("runs");
    let wrapper = dir.path().join("copyq");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho run >> '{}'\nexec copyq \"$@\"\n",
            count.display()
        ),
    )
    .expect("wrapper");
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let gw = gateway_with(copyq(), |s| {
        s.copyq.backend = copyq_mcp::config::BackendKind::Cli;
        s.copyq.command = wrapper.display().to_string();
        s.server.trusted_proxies = vec!["127.0.0.1".into()];
    })
    .await;
    let before = std::fs::read_to_string(&count)
        .unwrap_or_default()
        .lines()
        .count();
    let mut checks = tokio::task::JoinSet::new();
    for i in 0..40 {
        let url = format!("{}/healthz", gw.base);
        checks.spawn(async move {
            reqwest::Client::new()
                .get(url)
                .header("x-forwarded-for", format!("198.51.100.{i}"))
                .send()
                .await
                .expect("healthz")
                .status()
                .as_u16()
        });
    }
    assert_eq!(checks.join_all().await, vec![200; 40]);
    let probes = std::fs::read_to_string(&count)
        .unwrap_or_default()
        .lines()
        .count()
        - before;
    assert!(
        probes <= 2,
        "40 checks at once ran {probes} copyq processes"
    );
    // One address may not run them without end.
    let mut statuses = Vec::new();
    for _ in 0..21 {
        let res = reqwest::Client::new()
            .get(format!("{}/healthz", gw.base))
            .header("x-forwarded-for", "203.0.113.50")
            .send()
            .await
            .expect("healthz");
        statuses.push(res.status().as_u16());
    }
    assert_eq!(statuses[..20], [200; 20]);
    assert_eq!(statuses[20], 429);
}

/// The head of an HTTP/1 answer on `stream` (up to its blank line), read byte by byte so that
/// nothing after it is taken.
async fn answer_head(stream: &mut tokio::net::TcpStream) -> String {
    use tokio::io::AsyncReadExt;
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let byte = tokio::time::timeout(std::time::Duration::from_secs(10), stream.read_u8())
            .await
            .expect("an answer")
            .expect("read");
        head.push(byte);
    }
    String::from_utf8(head)
        .expect("ascii head")
        .to_ascii_lowercase()
}

/// A POST to /mcp whose body is held back: its head only.
fn post_head(gw: &Gateway, token: Option<&str>, length: usize) -> String {
    let host = gw.base.split("://").nth(1).expect("authority");
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{auth}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n\r\n"
    )
}

/// Refused before its body has arrived, a request's connection cannot be kept (the server stops
/// reading it), so the answer must say `Connection: close`: without it a client pools the
/// connection and its next request meets a closed socket (httpx: "Server disconnected without
/// sending a response", the OAuth clients' flake). An answered request keeps its connection.
#[tokio::test]
async fn a_refusal_before_the_body_says_the_connection_closes() {
    use tokio::io::AsyncWriteExt;
    let gw = edge_gateway().await;
    let body = list().to_string();

    let mut refused = connect_from("127.0.0.1", &gw).await;
    let head = post_head(&gw, None, body.len());
    refused.write_all(head.as_bytes()).await.expect("write");
    let answer = answer_head(&mut refused).await;
    assert!(answer.starts_with("http/1.1 401"), "{answer}");
    assert!(answer.contains("\r\nconnection: close\r\n"), "{answer}");
    assert!(closed_within(&mut refused, std::time::Duration::from_secs(5)).await);

    let mut served = connect_from("127.0.0.1", &gw).await;
    for _ in 0..2 {
        let head = post_head(&gw, Some(&gw.read), body.len());
        served.write_all(head.as_bytes()).await.expect("write");
        served.write_all(body.as_bytes()).await.expect("write");
        let answer = answer_head(&mut served).await;
        assert!(answer.starts_with("http/1.1 200"), "{answer}");
        assert!(!answer.contains("connection: close"), "{answer}");
        let length: usize = answer
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .and_then(|l| l.trim().parse().ok())
            .expect("a sized answer");
        let mut rest = vec![0u8; length];
        tokio::io::AsyncReadExt::read_exact(&mut served, &mut rest)
            .await
            .expect("the answer's body");
    }
}
