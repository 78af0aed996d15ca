//! CopyQ's save delays, zeroed while a write to a tab open in CopyQ's window is made, are put back
//! whatever happens: the request cancelled, CopyQ hanging or gone halfway, the gateway stopped.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::proxy::{Fault, Proxy, utf16};
use crate::support::*;

/// Wait (up to 15 s) for CopyQ's save delays to be `want`.
async fn delays_become(copyq: &PrivateCopyq, want: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let now = save_delays(copyq);
        if now == want || Instant::now() > deadline {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The write's insert into `tab` (not the socket client's probe of the slot, which names no tab).
fn insert_into(tab: &str) -> Vec<u8> {
    utf16(tab)
}

/// The request is cancelled (its deadline passes) while the write waits with CopyQ's save delays at
/// 0: the write still ends, and puts them back. (rmcp 3.11 itself runs the tool on after the
/// request is gone; the write's own task keeps this true whatever rmcp does.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_cancelled_halfway_puts_the_save_delays_back() {
    let copyq = PrivateCopyq::start().expect("CopyQ");
    pinned(&copyq, "mcp/workspace/cancel");
    let before = save_delays(&copyq);
    assert!(before.starts_with("added=300000,"), "{before}");
    // Long enough for the slowest CLI (a chroot's) to reach the insert before the deadline.
    let slow = || std::thread::sleep(Duration::from_millis(5000));
    let tab = insert_into("mcp/workspace/cancel");
    let proxy = Proxy::start(
        &copyq,
        &[b"browserInsert", &tab],
        1,
        Fault::Run(Box::new(slow)),
    );
    let gw = gateway_with(&copyq, |s| {
        proxy.configure(s);
        s.limits.request_timeout_ms = 2500;
    })
    .await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "mcp_write",
        "arguments": {"mode": "add", "tab": "workspace/cancel", "text": "cancelled"}}});
    let (status, _, _) = raw_post(&gw.url, Some(&gw.write), body).await;
    assert_eq!(status, 408, "the request deadline cut the request");
    assert_eq!(
        save_delays(&copyq).split(',').next(),
        Some("added=0"),
        "the write was cut with the delays at 0"
    );
    assert_eq!(
        delays_become(&copyq, &before).await,
        before,
        "the save delays are back"
    );
    assert!(proxy.fired());
    assert_eq!(
        tab_texts(&copyq, "mcp/workspace/cancel"),
        ["cancelled", "first"],
        "the write ran to its end"
    );
}

/// CopyQ hangs (SIGSTOP) just as the write's insert is sent, past the call timeout: the reply says
/// the write may still be made (the body's error, not that of the restore after it, which times
/// out too), the entry is kept, and once CopyQ answers again the write is made and the save delays
/// are back: the CLI's copyq process was left to finish, the socket's calls were queued in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_to_a_hanging_copyq_ends_when_it_answers() {
    let copyq = PrivateCopyq::start().expect("CopyQ");
    pinned(&copyq, "mcp/workspace/hung");
    let before = save_delays(&copyq);
    let lock = copyq
        .settings_path()
        .join(format!("copyq-{0}/copyq-{0}.lock", copyq.session()));
    let pid = std::fs::read_to_string(lock).expect("lock file");
    let pid = pid.lines().next().unwrap_or_default().trim().to_owned();
    let hang = move || {
        let status = std::process::Command::new("kill")
            .args(["-STOP", &pid])
            .status()
            .expect("kill");
        assert!(status.success());
    };
    let tab = insert_into("mcp/workspace/hung");
    let proxy = Proxy::start(
        &copyq,
        &[b"browserInsert", &tab],
        1,
        Fault::Run(Box::new(hang)),
    );
    let gw = gateway_with(&copyq, |s| {
        proxy.configure(s);
        s.copyq.timeout_ms = 3000;
    })
    .await;
    let c = client(&gw.url, &gw.write).await;
    let got = err(
        &c,
        "mcp_write",
        json!({"mode": "add", "tab": "workspace/hung", "text": "late"}),
    )
    .await;
    copyq.resume_server();
    assert!(proxy.fired());
    let start = "error|COPYQ_ERROR|CopyQ stopped answering during this write to 'workspace/hung' (CopyQ did not \
                 answer within 3s): it may have been made, or may still be made when CopyQ answers. Read the tab \
                 before retrying. The audit log keeps it as entry #";
    assert!(
        got.starts_with(start) && got.ends_with(", marked partial"),
        "{got}"
    );
    assert_eq!(delays_become(&copyq, &before).await, before);
    assert_eq!(tab_texts(&copyq, "mcp/workspace/hung"), ["late", "first"]);
}

/// The connection drops just as the write's insert is sent (CopyQ itself stays up): the write
/// fails, nothing was made, and the save delays it zeroed are back when the reply comes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_fails_halfway_has_put_the_save_delays_back_when_it_answers() {
    let copyq = PrivateCopyq::start().expect("CopyQ");
    pinned(&copyq, "mcp/workspace/dropped");
    let before = save_delays(&copyq);
    let tab = insert_into("mcp/workspace/dropped");
    let proxy = Proxy::start(&copyq, &[b"browserInsert", &tab], 1, Fault::Close);
    let gw = gateway_with(&copyq, |s| proxy.configure(s)).await;
    let c = client(&gw.url, &gw.write).await;
    let got = err(
        &c,
        "mcp_write",
        json!({"mode": "add", "tab": "workspace/dropped", "text": "never"}),
    )
    .await;
    assert!(proxy.fired());
    assert!(got.starts_with("error|COPYQ_ERROR|"), "{got}");
    assert!(!got.contains("made"), "nothing was made: {got}");
    assert_eq!(save_delays(&copyq), before, "back before the reply");
    assert_eq!(tab_texts(&copyq, "mcp/workspace/dropped"), ["first"]);
}

/// CopyQ is gone for a while from the write's insert on: the write fails (nothing was made) and
/// the save delays cannot be put back then. They are owed: the next call puts them back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn save_delays_left_at_0_by_a_vanished_copyq_are_put_back_by_the_next_call() {
    let copyq = PrivateCopyq::start().expect("CopyQ");
    pinned(&copyq, "mcp/workspace/gone");
    let before = save_delays(&copyq);
    let tab = insert_into("mcp/workspace/gone");
    let sever = Fault::Sever(Duration::from_millis(1500));
    let proxy = Proxy::start(&copyq, &[b"browserInsert", &tab], 1, sever);
    let gw = gateway_with(&copyq, |s| proxy.configure(s)).await;
    let c = client(&gw.url, &gw.write).await;
    let got = err(
        &c,
        "mcp_write",
        json!({"mode": "add", "tab": "workspace/gone", "text": "never"}),
    )
    .await;
    assert!(proxy.fired());
    assert!(!got.contains("made"), "nothing was made: {got}");
    assert!(
        save_delays(&copyq).starts_with("added=0,"),
        "left at 0 while CopyQ was gone"
    );
    tokio::time::sleep(Duration::from_millis(1600)).await;
    ok(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "workspace/gone"}),
    )
    .await;
    assert_eq!(save_delays(&copyq), before, "the read put them back");
    assert_eq!(tab_texts(&copyq, "mcp/workspace/gone"), ["first"]);
}

/// The client gives up on a slow write, and the gateway is stopped (SIGTERM) while the write goes
/// on: the gateway waits for it to end before it exits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopping_gateway_lets_the_write_in_progress_end() {
    let copyq = PrivateCopyq::start().expect("CopyQ");
    pinned(&copyq, "mcp/workspace/stop");
    let before = save_delays(&copyq);
    let slow = || std::thread::sleep(Duration::from_millis(5000));
    let tab = insert_into("mcp/workspace/stop");
    let proxy = Proxy::start(
        &copyq,
        &[b"browserInsert", &tab],
        1,
        Fault::Run(Box::new(slow)),
    );
    let mut probe = copyq_mcp::config::Settings::defaults().expect("settings");
    copyq.configure(&mut probe);
    proxy.configure(&mut probe);
    let data = tempfile::tempdir().expect("data");
    let token = std::process::Command::new(env!("CARGO_BIN_EXE_copyq-mcp"))
        .args([
            "token",
            "issue",
            "--role",
            "write",
            "--name",
            "stop",
            "--data-dir",
        ])
        .arg(data.path())
        .output()
        .expect("token");
    let token = String::from_utf8_lossy(&token.stdout).trim().to_owned();
    let backend = std::env::var("COPYQ_MCP_TEST_BACKEND").unwrap_or_else(|_| "auto".into());
    let env = [
        ("COPYQ_MCP__COPYQ__SOCKET", probe.copyq.socket.as_str()),
        (
            "COPYQ_MCP__COPYQ__SETTINGS_PATH",
            probe.copyq.settings_path.as_str(),
        ),
        ("COPYQ_MCP__COPYQ__BACKEND", backend.as_str()),
    ];
    let (mut gateway, url) = spawn_serve(&copyq, data.path(), &env, std::process::Stdio::null());
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "mcp_write",
        "arguments": {"mode": "add", "tab": "workspace/stop", "text": "stopped"}}});
    let gave_up = reqwest::Client::new()
        .post(&url)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string())
        .timeout(Duration::from_millis(2500))
        .send()
        .await;
    assert!(gave_up.is_err(), "the client gave up before the reply");
    assert!(
        save_delays(&copyq).starts_with("added=0,"),
        "the write is under way"
    );
    let status = std::process::Command::new("kill")
        .args(["-TERM", &gateway.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let _ = gateway.wait();
    assert!(proxy.fired());
    assert_eq!(
        save_delays(&copyq),
        before,
        "the write ended before the gateway"
    );
    assert_eq!(
        tab_texts(&copyq, "mcp/workspace/stop"),
        ["stopped", "first"]
    );
}
