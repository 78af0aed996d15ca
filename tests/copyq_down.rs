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

#[tokio::test]
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
    let gw = gateway_with(&copyq, |s| s.copyq.command = "/nonexistent/copyq".into()).await;
    let c = client(&gw.url, &gw.read).await;
    let got = err(&c, "mcp_read", json!({"mode": "tree"})).await;
    assert!(
        got.starts_with("error|COPYQ_ERROR|CopyQ failed: cannot run '/nonexistent/copyq'"),
        "{got}"
    );
}
