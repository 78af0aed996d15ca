//! The server's title and icon and each tool's icon: CopyQ's own icon as a `data:` URI, sent
//! only to clients whose protocol version defines titles (2025-06-18) and icons (2025-11-25).

use crate::support::*;
use base64::Engine;
use serde_json::{Value, json};

fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

/// CopyQ's 32x32 icon as installed here, as the data URI a client should get.
fn copyq_icon() -> String {
    let png = std::fs::read("/usr/share/icons/hicolor/32x32/apps/copyq.png").expect("CopyQ's icon");
    let data = base64::engine::general_purpose::STANDARD.encode(png);
    format!("data:image/png;base64,{data}")
}

async fn post(gw: &Gateway, version: &str, body: Value) -> Value {
    let res = reqwest::Client::new()
        .post(&gw.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {}", gw.read))
        .header("mcp-protocol-version", version)
        .body(body.to_string())
        .send()
        .await
        .expect("HTTP answers");
    serde_json::from_str(&res.text().await.expect("body")).expect("JSON")
}

#[tokio::test]
async fn titles_and_icons_follow_the_protocol_version() {
    let gw = gateway(copyq()).await;
    let icon = json!({"src": copyq_icon(), "mimeType": "image/png", "sizes": ["32x32"]});
    for (version, title, icons) in [
        ("2024-11-05", false, false),
        ("2025-03-26", false, false),
        ("2025-06-18", true, false),
        ("2025-11-25", true, true),
    ] {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        let info = &post(&gw, version, init).await["result"]["serverInfo"];
        let want_title = if title {
            json!("CopyQ clipboard")
        } else {
            Value::Null
        };
        assert_eq!(info["title"], want_title, "{version}: {info}");
        assert_eq!(
            info["icons"].get(0) == Some(&icon),
            icons,
            "{version}: {info}"
        );
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
        let tools = post(&gw, version, list).await["result"]["tools"].clone();
        for tool in tools.as_array().expect("tools") {
            let want = if icons { json!([icon]) } else { Value::Null };
            assert_eq!(tool["icons"], want, "{version}: {}", tool["name"]);
        }
    }
}

/// The Python SDK 2.x (2025-11-25) takes the icons as its model of an icon.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_client_gets_the_icons() {
    run_install("tests/clients/install.sh");
    let gw = gateway(copyq()).await;
    let mut cmd = std::process::Command::new(clients_dir().join("py2/bin/python"));
    cmd.arg(repo().join("tests/clients/py_client.py"))
        .args(["--url", &gw.url, "--token", &gw.read, "list"]);
    let listing = client_json(cmd, "the Python client").await;
    for tool in listing["tools"].as_array().expect("tools") {
        assert_eq!(
            tool["icons"][0]["src"],
            json!(copyq_icon()),
            "{}",
            tool["name"]
        );
    }
}
