//! What the owner sees of a running gateway: refused requests logged once each at info with
//! their reason and the client's address (never the token), `/healthz` logging only when CopyQ
//! goes down (not per probe), JSON logs, and Prometheus metrics scraped and parsed.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::*;
use base64::Engine;
use serde_json::json;

fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

const BIN: &str = env!("CARGO_BIN_EXE_copyq-mcp");

fn owner_cmd(data: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(args)
        .arg("--data-dir")
        .arg(data)
        .env("XDG_CONFIG_HOME", data)
        .output()
        .expect("run copyq-mcp");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A token signed with `data`'s key, with `exp` and `aud` as given.
fn crafted(data: &std::path::Path, exp: u64, aud: &str) -> String {
    let key = std::fs::read_to_string(data.join("signing.key")).expect("key");
    let key = base64::engine::general_purpose::STANDARD
        .decode(key.trim())
        .expect("base64 key");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let claims = json!({"sub": "crafted", "role": "read", "iat": now - 100, "exp": exp,
                        "jti": "j1", "iss": "copyq-mcp", "aud": aud});
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(&key).expect("key"),
    )
    .expect("sign")
}

/// SIGTERM, then the child's stderr.
fn stop(mut child: Spawned) -> String {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    stderr
}

#[tokio::test]
async fn refusals_are_logged_with_their_reason_never_the_token() {
    let data = tempfile::tempdir().expect("tempdir");
    let other = tempfile::tempdir().expect("tempdir");
    let revoked = owner_cmd(
        data.path(),
        &["token", "issue", "--role", "read", "--name", "gone"],
    );
    owner_cmd(data.path(), &["token", "revoke", "gone"]);
    // The same key in another data dir: a well-signed token of another state database.
    std::fs::copy(
        data.path().join("signing.key"),
        other.path().join("signing.key"),
    )
    .expect("copy key");
    let elsewhere = owner_cmd(
        other.path(),
        &["token", "issue", "--role", "read", "--name", "elsewhere"],
    );
    let expired = crafted(data.path(), 1_000, "copyq-mcp");
    let audience = crafted(data.path(), 4_000_000_000, "another-resource");
    // The signature's first character changes: all six of its bits are signature bits. (The last
    // character of a 32-byte signature holds four signature bits and two padding bits that the
    // decoder ignores; the test used to turn a last 'A' into 'B', the same signature, one run in
    // sixteen: stop 18's red CI.)
    let forged = {
        let t = crafted(data.path(), 4_000_000_000, "copyq-mcp");
        let at = t.rfind('.').expect("three parts") + 1;
        let first = if t[at..].starts_with('A') { "Q" } else { "A" };
        format!("{}{first}{}", &t[..at], &t[at + 1..])
    };
    let (child, url) = spawn_serve(
        copyq(),
        data.path(),
        &[
            ("RUST_LOG", "info,rmcp=warn"),
            ("COPYQ_MCP__SERVER__TRUSTED_PROXIES", "127.0.0.1"),
        ],
        Stdio::piped(),
    );
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    for token in [
        Some(revoked.as_str()),
        Some(&elsewhere),
        Some(&expired),
        Some(&audience),
        Some(&forged),
        Some("not-a-jwt"),
    ] {
        let (status, _, body) = raw_post(&url, token, list.clone()).await;
        assert_eq!((status, body.as_str()), (401, "Unauthorized\n"));
    }
    let http = reqwest::Client::new();
    // Through a trusted proxy: the log names the client it forwarded for.
    let res = http
        .post(&url)
        .header("x-forwarded-for", "203.0.113.9")
        .body("{}")
        .send()
        .await
        .expect("http");
    assert_eq!(res.status(), 401);
    let res = http
        .post(&url)
        .header("host", "evil.example")
        .body("{}")
        .send()
        .await
        .expect("http");
    assert_eq!(res.status(), 403);
    let res = http
        .post(&url)
        .header("origin", "https://evil.example")
        .body("{}")
        .send()
        .await
        .expect("http");
    assert_eq!(res.status(), 403);
    let logs = stop(child);

    for reason in [
        "reason=\"token revoked\" named=gone",
        "reason=\"token of another data dir or state database\"",
        "reason=\"token expired\"",
        "reason=\"wrong audience\"",
        "reason=\"bad signature (another signing key)\"",
        "reason=\"malformed token\"",
        "reason=\"no bearer token\"",
        "reason=\"Host not allowed\" named=evil.example",
        "reason=\"Origin not allowed\" named=https://evil.example",
    ] {
        let lines: Vec<&str> = logs.lines().filter(|l| l.contains(reason)).collect();
        assert_eq!(lines.len(), 1, "{reason} once in:\n{logs}");
        assert!(lines[0].contains(" INFO "), "{}", lines[0]);
        let client = if reason.contains("no bearer token") {
            "client=203.0.113.9"
        } else {
            "client=127.0.0.1"
        };
        assert!(lines[0].contains(client), "{}", lines[0]);
        assert!(lines[0].contains("request refused"), "{}", lines[0]);
    }
    for token in [&revoked, &elsewhere, &expired, &audience, &forged] {
        assert!(
            !logs.contains(token.as_str()),
            "the log holds a token:\n{logs}"
        );
        let signature = token.rsplit('.').next().expect("signature");
        assert!(
            !logs.contains(signature),
            "the log holds a token's signature"
        );
    }
}

/// CopyQ down: many probes, one log line (at warn, naming the socket), no ERROR per 503; and
/// `log.format = "json"` writes one JSON object per line.
#[tokio::test]
async fn health_logs_the_change_not_every_probe_in_json() {
    let data = tempfile::tempdir().expect("tempdir");
    let nowhere = tempfile::tempdir().expect("tempdir");
    let nowhere_path = nowhere.path().display().to_string();
    let (child, url) = spawn_serve(
        copyq(),
        data.path(),
        &[
            ("RUST_LOG", "info,rmcp=warn"),
            ("COPYQ_MCP__LOG__FORMAT", "json"),
            ("COPYQ_MCP__COPYQ__SETTINGS_PATH", &nowhere_path),
        ],
        Stdio::piped(),
    );
    let health = url.replace("/mcp", "/healthz");
    for _ in 0..3 {
        let res = reqwest::get(&health).await.expect("http");
        assert_eq!(res.status(), 503);
        // Past the one-second cache: each of these is a fresh probe.
        tokio::time::sleep(Duration::from_millis(1100)).await;
    }
    let logs = stop(child);
    let lines: Vec<serde_json::Value> = logs
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let down: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| {
            l["fields"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("(/healthz: down)"))
        })
        .collect();
    assert_eq!(down.len(), 1, "{logs}");
    assert_eq!(down[0]["level"], "WARN");
    let socket = copyq_mcp::backend::socket::path::socket_path(nowhere.path(), copyq().session())
        .expect("path");
    assert_eq!(
        down[0]["fields"]["tried"],
        format!("socket {}", socket.display())
    );
    assert!(lines.iter().all(|l| l["level"] != "ERROR"), "{logs}");
}

fn sample(scrape: &prometheus_parse::Scrape, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    scrape
        .samples
        .iter()
        .find(|s| s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .and_then(|s| match s.value {
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v) => Some(v),
            _ => None,
        })
}

async fn get_metrics(base: &str, forwarded: Option<&str>, token: Option<&str>) -> (u16, String) {
    let mut req = reqwest::Client::new().get(format!("{base}/metrics"));
    if let Some(f) = forwarded {
        req = req.header("x-forwarded-for", f);
    }
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let res = req.send().await.expect("http");
    (res.status().as_u16(), res.text().await.unwrap_or_default())
}

#[tokio::test]
async fn metrics_are_scraped_and_parsed() {
    copyq()
        .seed("mcp/info", &items(&["counted"]))
        .expect("seed");
    let gw = gateway_with(copyq(), |s| {
        s.metrics.enabled = true;
        s.server.trusted_proxies = vec!["127.0.0.1".into()];
    })
    .await;
    let c = client(&gw.url, &gw.read).await;
    for _ in 0..2 {
        ok(&c, "mcp_read", json!({"mode": "list", "tab": "info"})).await;
    }
    err(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "nonexistent"}),
    )
    .await;
    let (status, text) = get_metrics(&gw.base, None, None).await;
    assert_eq!(status, 200, "{text}");
    let scrape =
        prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).expect("parses");
    let calls = |outcome| {
        sample(
            &scrape,
            "copyq_mcp_tool_calls_total",
            &[("tool", "mcp_read"), ("mode", "list"), ("outcome", outcome)],
        )
    };
    assert_eq!(calls("ok"), Some(2.0), "{text}");
    assert_eq!(calls("TAB_NOT_FOUND"), Some(1.0), "{text}");
    assert_eq!(
        sample(&scrape, "copyq_mcp_copyq_up", &[]),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        sample(
            &scrape,
            "copyq_mcp_backend",
            &[("backend", health_backend(&gw.settings))]
        ),
        Some(1.0),
        "{text}"
    );
    let mcp_ok = sample(
        &scrape,
        "copyq_mcp_http_requests_total",
        &[("route", "/mcp"), ("method", "POST"), ("status", "200")],
    );
    assert!(mcp_ok.is_some_and(|n| n >= 3.0), "{text}");
    assert!(
        scrape
            .samples
            .iter()
            .any(|s| s.metric.starts_with("copyq_mcp_tool_call_duration_seconds")),
        "a latency histogram: {text}"
    );
    // From elsewhere (a client behind the trusted proxy), only with a token.
    let (status, _) = get_metrics(&gw.base, Some("203.0.113.5"), None).await;
    assert_eq!(status, 401);
    let (status, _) = get_metrics(&gw.base, Some("203.0.113.5"), Some(&gw.read)).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn metrics_are_off_by_default() {
    let gw = gateway(copyq()).await;
    let (status, _) = get_metrics(&gw.base, None, None).await;
    assert_eq!(status, 404);
}
