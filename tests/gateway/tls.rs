//! Built-in HTTPS: a client that pins the self-signed certificate's key reaches the gateway, a
//! changed certificate is picked up without a restart, and plain HTTP on a LAN address is refused.
//! No CopyQ: the gateway runs over the in-memory backend.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::*;
use copyq_mcp::app::{Application, StartError};
use copyq_mcp::backend::{Backend, MemoryBackend};

const BIN: &str = env!("CARGO_BIN_EXE_copyq-mcp");

/// `tls generate` for `dir` (`--force`: replacing the pair there): (fingerprint, pin).
fn generate(dir: &Path, force: bool) -> (String, String) {
    let out = Command::new(BIN)
        .args([
            "tls",
            "generate",
            "--name",
            "localhost",
            "--name",
            "127.0.0.1",
            "--out",
        ])
        .arg(dir)
        .arg("--data-dir")
        .arg(dir)
        .args(force.then_some("--force"))
        .output()
        .expect("run tls generate");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let value = |prefix: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .map(str::to_owned)
            .expect(prefix)
    };
    (
        value("SHA-256 fingerprint: "),
        value("public key pin (curl --pinnedpubkey): "),
    )
}

/// curl as a second client would run it: (success, body).
async fn curl(args: Vec<String>) -> (bool, String) {
    let out = tokio::task::spawn_blocking(move || {
        Command::new("curl")
            .args(["-sS", "--fail", "--max-time", "10"])
            .args(args)
            .output()
    })
    .await
    .expect("join")
    .expect("curl");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pinned_https_and_live_certificate_reload() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (fingerprint, pin) = generate(dir.path(), false);
    assert_eq!(fingerprint.len(), 95, "{fingerprint}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir.path().join("key.pem"))
        .expect("key")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let gw = edge_gateway_with(|s| {
        s.tls.cert = dir.path().join("cert.pem").display().to_string();
        s.tls.key = dir.path().join("key.pem").display().to_string();
    })
    .await;
    assert!(gw.base.starts_with("https://127.0.0.1:"), "{}", gw.base);
    let health = format!("{}/healthz", gw.base);

    let (ok, body) = curl(vec![
        "--cacert".into(),
        dir.path().join("cert.pem").display().to_string(),
        health.replace("127.0.0.1", "localhost"),
    ])
    .await;
    assert!(
        ok && body.contains("\"copyq\":\"up\""),
        "trusting the certificate: {body}"
    );
    let (ok, _) = curl(vec![
        "-k".into(),
        "--pinnedpubkey".into(),
        pin.clone(),
        health.clone(),
    ])
    .await;
    assert!(ok, "pinning the key");
    let (ok, _) = curl(vec![health.replace("https", "http")]).await;
    assert!(!ok, "no plain HTTP on the TLS port");
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp_read","arguments":{"mode":"tree","max_items":0}}}"#;
    let (ok, body) = curl(vec![
        "-k".into(),
        "--pinnedpubkey".into(),
        pin.clone(),
        "-H".into(),
        format!("Authorization: Bearer {}", gw.read),
        "-H".into(),
        "Content-Type: application/json".into(),
        "-H".into(),
        "Accept: application/json, text/event-stream".into(),
        "-d".into(),
        call.into(),
        gw.url.clone(),
    ])
    .await;
    assert!(
        ok && body.contains("\"isError\":false"),
        "an MCP call over HTTPS: {body}"
    );

    // A new certificate in place of the old: picked up without a restart.
    let (_, new_pin) = generate(dir.path(), true);
    assert_ne!(new_pin, pin);
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (ok, _) = curl(vec![
            "-k".into(),
            "--pinnedpubkey".into(),
            new_pin.clone(),
            health.clone(),
        ])
        .await;
        if ok {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the new certificate was not picked up"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let (ok, _) = curl(vec!["-k".into(), "--pinnedpubkey".into(), pin, health]).await;
    assert!(!ok, "the old key is no longer served");
}

#[tokio::test]
async fn plain_http_beyond_loopback_needs_an_explicit_flag() {
    let mut settings = copyq_mcp::config::Settings::defaults().expect("settings");
    crate::support::edge::point_nowhere(&mut settings);
    settings.server.bind = "0.0.0.0:0".parse().expect("addr");
    let memory = || Backend::Memory(MemoryBackend::default());
    match Application::with_backend(&settings, memory()).await {
        Err(e @ StartError::PlainHttp(_)) => {
            assert!(e.to_string().contains("allow_plain_http"), "{e}")
        }
        Err(e) => panic!("unexpected error: {e}"),
        Ok(_) => panic!("plain HTTP on 0.0.0.0 must be refused"),
    }
    settings.server.allow_plain_http = true;
    assert!(Application::with_backend(&settings, memory()).await.is_ok());
}
