//! CopyQ stopped, killed and restarted under a running gateway: calls fail fast with COPYQ_ERROR,
//! `/healthz` says so, and service resumes by itself once CopyQ is back.

use std::time::{Duration, Instant};

use crate::support::*;
use serde_json::{Value, json};

async fn health_now(gw: &Gateway) -> (u16, Value) {
    let res = reqwest::get(format!("{}/healthz", gw.base))
        .await
        .expect("http");
    // A 429 (the per-address limit, when polling) has no JSON body: Null, and poll on.
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

/// `/healthz` once it shows `want`: it answers from a probe cached for a second, so a change of
/// CopyQ's state shows within about that (waits at most 5 s, then returns what it says).
async fn health_becomes(gw: &Gateway, want: &(u16, Value)) -> (u16, Value) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let got = health_now(gw).await;
        if &got == want || Instant::now() > deadline {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
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
        assert_eq!(got, copyq_unreachable(&gw.settings));
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "failing took {:?}",
            started.elapsed()
        );
        let backend = health_backend(&gw.settings);
        {
            let want = (503, health_down(&gw.settings, backend));
            assert_eq!(health_becomes(&gw, &want).await, want);
        }

        copyq.start_server().expect("restart CopyQ");
        let got = ok(&c, "mcp_read", args.clone()).await;
        assert!(
            got.contains("text:survives restarts"),
            "after restart (crash={crash}): {got}"
        );
        {
            let want = (200, health_up(&copyq, backend));
            assert_eq!(health_becomes(&gw, &want).await, want);
        }
    }
}

/// `auto` decides per connection: a gateway started before CopyQ (a service at login) ends on the
/// socket once CopyQ is up, rather than keeping a choice made while it was down.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_started_before_copyq_ends_on_the_socket() {
    let mut copyq = PrivateCopyq::start().expect("private CopyQ");
    copyq
        .seed("mcp/info", &items(&["was here first"]))
        .expect("seed");
    copyq.stop_server();
    let gw = gateway_with(&copyq, |s| {
        s.copyq.backend = copyq_mcp::config::BackendKind::Auto
    })
    .await;
    {
        let want = (503, health_down(&gw.settings, "socket"));
        assert_eq!(health_becomes(&gw, &want).await, want);
    }
    let c = client(&gw.url, &gw.read).await;
    let args = json!({"mode": "item", "tab": "info", "index": 0});
    assert_eq!(
        err(&c, "mcp_read", args.clone()).await,
        copyq_unreachable(&gw.settings)
    );
    copyq.start_server().expect("start CopyQ");
    assert_eq!(
        ok(&c, "mcp_read", args).await,
        "mode:item|tab:info|full_path:mcp/info|index:0\ntext:was here first\ntags:[]"
    );
    {
        let want = (200, health_up(&copyq, "socket"));
        assert_eq!(health_becomes(&gw, &want).await, want);
    }
}

/// CopyQ upgraded under a running gateway (6.4 on the host, then the CopyQ of the chroot named by
/// COPYQ_MCP_TEST_UPGRADE_CHROOT, e.g. 17.0 with Qt 6, with the same session and files): the
/// gateway detects the new layout on its next connection and keeps serving through the socket.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_follows_a_copyq_upgrade_to_another_protocol() {
    let Some(to) = std::env::var_os("COPYQ_MCP_TEST_UPGRADE_CHROOT") else {
        eprintln!("COPYQ_MCP_TEST_UPGRADE_CHROOT is not set: skipped");
        return;
    };
    let mut copyq = PrivateCopyq::start_in(None).expect("private CopyQ");
    let gw = gateway_with(&copyq, |s| {
        s.copyq.backend = copyq_mcp::config::BackendKind::Auto
    })
    .await;
    let c = client(&gw.url, &gw.write).await;
    let add = |text: &str| json!({"mode": "add", "tab": "workspace/upgrade", "text": text});
    ok(&c, "mcp_write", add("before")).await;
    let before = health_up(&copyq, "socket");
    {
        let want = (200, before.clone());
        assert_eq!(health_becomes(&gw, &want).await, want);
    }
    copyq.stop_server();
    copyq.use_chroot(Some(to.into())).expect("chroot");
    copyq.start_server().expect("start the other CopyQ");
    let after = health_up(&copyq, "socket");
    assert_ne!(before, after, "another protocol");
    ok(&c, "mcp_write", add("after")).await;
    let list = json!({"mode": "list", "tab": "workspace/upgrade"});
    let got = ok(&c, "mcp_read", list).await;
    assert!(got.ends_with("\n0|\"after\"|[]\n1|\"before\"|[]"), "{got}");
    {
        let want = (200, after);
        assert_eq!(health_becomes(&gw, &want).await, want);
    }
}

#[tokio::test]
async fn a_missing_copyq_binary_is_a_clear_error() {
    let copyq = PrivateCopyq::start().expect("private CopyQ");
    let gw = gateway_with(&copyq, |s| {
        s.copyq.backend = copyq_mcp::config::BackendKind::Cli;
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
        s.copyq.backend = copyq_mcp::config::BackendKind::Socket;
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
