//! CopyQ stopped, killed and restarted under a running gateway: calls fail fast with COPYQ_ERROR,
//! `/healthz` says so, and service resumes by itself once CopyQ is back.

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;

async fn health(gw: &Gateway) -> (u16, Value) {
    let res = reqwest::get(format!("{}/healthz", gw.base))
        .await
        .expect("http");
    (res.status().as_u16(), res.json().await.expect("json"))
}

// Multi-threaded: stopping CopyQ blocks this thread, and the gateway's socket client must still
// see CopyQ's stop message and hang up (CopyQ waits up to 10 s for its clients before it saves).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copyq_down_then_back() {
    let mut copyq = PrivateCopyq::start().expect("private CopyQ");
    copyq
        .seed("mcp/info", &items(&["survives restarts"]))
        .expect("seed");
    let gw = gateway(&copyq).await;
    let c = client(&gw.url, &gw.read).await;
    let args = json!({"mode": "item", "tab": "info", "index": 0});
    assert!(
        ok(&c, "mcp_read", args.clone())
            .await
            .contains("text:survives restarts")
    );

    for crash in [false, true] {
        if crash {
            copyq.kill_server();
        } else {
            copyq.stop_server();
        }
        let started = Instant::now();
        let got = err(&c, "mcp_read", args.clone()).await;
        assert_eq!(
            got,
            "error|COPYQ_ERROR|CopyQ is not running or not reachable; start the CopyQ server (`copyq &`) and retry"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "failing took {:?}",
            started.elapsed()
        );
        assert_eq!(
            health(&gw).await,
            (503, json!({"status": "degraded", "copyq": "down"}))
        );

        copyq.start_server().expect("restart CopyQ");
        let got = ok(&c, "mcp_read", args.clone()).await;
        assert!(
            got.contains("text:survives restarts"),
            "after restart (crash={crash}): {got}"
        );
        assert_eq!(health(&gw).await.0, 200);
    }
}

#[tokio::test]
async fn a_missing_copyq_binary_is_a_clear_error() {
    let copyq = PrivateCopyq::start().expect("private CopyQ");
    let gw = gateway_with(&copyq, |s| {
        s.copyq.backend = "cli".into();
        s.copyq.command = "/nonexistent/copyq".into();
    })
    .await;
    let c = client(&gw.url, &gw.read).await;
    let got = err(&c, "mcp_read", json!({"mode": "tree"})).await;
    assert!(
        got.starts_with("error|COPYQ_ERROR|CopyQ failed: cannot run '/nonexistent/copyq'"),
        "{got}"
    );
}

/// The socket backend never runs a `copyq` process: it works where there is no such executable.
#[tokio::test]
async fn the_socket_backend_needs_no_copyq_executable() {
    let copyq = PrivateCopyq::start().expect("private CopyQ");
    copyq
        .seed("mcp/info", &items(&["over the socket"]))
        .expect("seed");
    let gw = gateway_with(&copyq, |s| {
        s.copyq.backend = "socket".into();
        s.copyq.command = "/nonexistent/copyq".into();
    })
    .await;
    let c = client(&gw.url, &gw.write).await;
    let got = ok(&c, "mcp_read", json!({"mode": "list", "tab": "info"})).await;
    assert_eq!(
        got,
        "mode:list|tab:info|full_path:mcp/info|total:1|showing:0-0\n0|\"over the socket\"|[]"
    );
    let got = ok(
        &c,
        "mcp_write",
        json!({"mode": "add", "tab": "info", "text": "written natively"}),
    )
    .await;
    assert_eq!(
        got,
        "ok|mode:add|tab:info|full_path:mcp/info|index:0|text_len:16|tags:0|note:False"
    );
}
