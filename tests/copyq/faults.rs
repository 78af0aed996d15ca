//! Faults the gateway must survive: a hanging CopyQ, an unusable data dir, a locked database, and
//! a crash of the gateway itself under a stream of writes, which loses no acknowledged write.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::*;
use serde_json::{Value, json};

/// This suite's own private CopyQ, started on first use.
fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_copyq_fails_calls_fast_and_service_resumes() {
    let copyq = PrivateCopyq::start().expect("CopyQ");
    copyq
        .seed("mcp/info", &items(&["still here"]))
        .expect("seed");
    let gw = gateway_with(&copyq, |s| s.copyq.timeout_ms = 1500).await;
    let c = client(&gw.url, &gw.read).await;
    let args = json!({"mode": "list", "tab": "info"});
    ok(&c, "mcp_read", args.clone()).await;
    copyq.pause_server();
    let started = Instant::now();
    let got = err(&c, "mcp_read", args.clone()).await;
    assert!(got.starts_with("error|COPYQ_ERROR|"), "{got}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "a hanging CopyQ took {:?}",
        started.elapsed()
    );
    let res = reqwest::get(format!("{}/healthz", gw.base))
        .await
        .expect("health");
    assert_eq!(res.status().as_u16(), 503);
    copyq.resume_server();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (is_error, text) = call(&c, "mcp_read", args.clone()).await;
        if !is_error {
            assert!(text.contains("still here"), "{text}");
            break;
        }
        assert!(Instant::now() < deadline, "service did not resume: {text}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn an_unusable_data_dir_is_a_clear_start_up_error() {
    let file = tempfile::NamedTempFile::new().expect("file");
    let mut settings = copyq_mcp::config::Settings::defaults().expect("settings");
    copyq().configure(&mut settings);
    settings.server.bind = "127.0.0.1:0".parse().expect("addr");
    settings.data_dir = file.path().join("sub").display().to_string();
    match copyq_mcp::app::Application::build(&settings).await {
        Err(e) => assert!(
            e.to_string().contains(&settings.data_dir),
            "names the place: {e}"
        ),
        Ok(_) => panic!("a data dir under a file cannot work"),
    }
}

/// A locked database refuses writes (nothing changes) instead of writing without an audit record,
/// an add and a delete alike, and writes work again once the lock is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_database_refuses_writes_and_changes_nothing() {
    let copyq = PrivateCopyq::start().expect("CopyQ");
    let gw = gateway(&copyq).await;
    let c = client(&gw.url, &gw.write).await;
    ok(
        &c,
        "mcp_write",
        json!({"mode": "add", "tab": "workspace/locked", "text": "before"}),
    )
    .await;
    let db = rusqlite::Connection::open(gw.settings.data_dir().join("copyq-mcp.db")).expect("db");
    db.execute_batch("BEGIN EXCLUSIVE").expect("lock");
    let got = err(
        &c,
        "mcp_write",
        json!({"mode": "add", "tab": "workspace/locked", "text": "during"}),
    )
    .await;
    let refused = "error|COPYQ_ERROR|The gateway's audit log is unavailable, so no write is allowed; nothing was changed";
    assert_eq!(got, refused);
    // A delete checks its row while its entry is being recorded: refused all the same, the row
    // still there.
    let got = err(
        &c,
        "mcp_write",
        json!({"mode": "delete", "tab": "workspace/locked", "index": 0}),
    )
    .await;
    assert_eq!(got, refused);
    db.execute_batch("COMMIT").expect("unlock");
    ok(
        &c,
        "mcp_write",
        json!({"mode": "add", "tab": "workspace/locked", "text": "after"}),
    )
    .await;
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "workspace/locked"}),
    )
    .await;
    assert_eq!(
        got,
        "mode:list|tab:workspace/locked|full_path:mcp/workspace/locked|total:2|showing:0-1\n0|\"after\"|[]\n1|\"before\"|[]"
    );
}

/// A token from `copyq-mcp token issue` for the state in `data`.
pub(crate) fn issue_token(data: &std::path::Path, role: &str, name: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_copyq-mcp"))
        .args([
            "token",
            "issue",
            "--role",
            role,
            "--name",
            name,
            "--data-dir",
        ])
        .arg(data)
        .output()
        .expect("token");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// CopyQ failing with a message of its own (a script exception from the real CopyQ, through the
/// CLI backend): the client gets a fixed sentence with a reference, and the gateway's log has
/// CopyQ's words under that reference, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copyq_s_own_error_messages_go_to_the_log_not_to_the_client() {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    let copyq = copyq();
    let dir = tempfile::tempdir().expect("dir");
    let failing = dir.path().join("copyq");
    let script = format!(
        "#!/bin/sh\nexec '{}' eval -- 'throw new Error(\"internal detail 6b1e\")'\n",
        copyq.cli_command().display()
    );
    std::fs::write(&failing, script).expect("script");
    std::fs::set_permissions(&failing, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let data = tempfile::tempdir().expect("data");
    let token = issue_token(data.path(), "read", "internal");
    let command = failing.display().to_string();
    let env = [
        ("COPYQ_MCP__COPYQ__BACKEND", "cli"),
        ("COPYQ_MCP__COPYQ__COMMAND", command.as_str()),
    ];
    let (mut gateway, url) = spawn_serve(copyq, data.path(), &env, Stdio::piped());
    let c = client(&url, &token).await;
    let got = err(&c, "mcp_read", json!({"mode": "tree"})).await;
    let reference = got
        .strip_prefix("error|COPYQ_ERROR|CopyQ failed to answer (ref ")
        .and_then(|r| r.strip_suffix("); the gateway's log has the details"))
        .unwrap_or_else(|| panic!("{got}"))
        .to_owned();
    assert!(
        reference.len() == 6 && reference.chars().all(|c| c.is_ascii_hexdigit()),
        "{got}"
    );
    let _ = gateway.kill();
    let _ = gateway.wait();
    let mut log = String::new();
    if let Some(mut stderr) = gateway.stderr.take() {
        stderr.read_to_string(&mut log).expect("log");
    }
    let lines: Vec<&str> = log.lines().filter(|l| l.contains(&reference)).collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert!(
        lines[0].contains(" ERROR ") && lines[0].contains("internal detail 6b1e"),
        "{log}"
    );
}

/// One write; `Some(reply text)` when the gateway answered at all.
async fn try_add(http: &reqwest::Client, url: &str, token: &str, text: &str) -> Option<String> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "mcp_write",
        "arguments": {"mode": "add", "tab": "workspace/crash", "text": text}}});
    let res = http
        .post(url)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string())
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .ok()?;
    let v: Value = res.json().await.ok()?;
    v["result"]["content"][0]["text"]
        .as_str()
        .map(str::to_owned)
}

const UNLIMITED: &[(&str, &str)] = &[
    ("COPYQ_MCP__LIMITS__BURST", "100000"),
    ("COPYQ_MCP__LIMITS__REQUESTS_PER_MINUTE", "1000000"),
];

/// SIGKILL the gateway in the middle of a stream of writes: every write it acknowledged is in
/// CopyQ exactly once, and the restarted gateway serves at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_crash_under_load_loses_no_acknowledged_write() {
    let copyq = PrivateCopyq::start().expect("CopyQ");
    copyq
        .eval("config('maxitems', 10000)", b"")
        .expect("maxitems");
    let data = tempfile::tempdir().expect("data");
    let token = issue_token(data.path(), "write", "crash");
    let (mut gateway, url) = spawn_serve(&copyq, data.path(), UNLIMITED, Stdio::null());
    // The writers count their acknowledged writes; the kill comes once there are enough of them,
    // while the writers go on.
    let acks = std::sync::Arc::new((
        std::sync::atomic::AtomicUsize::new(0),
        tokio::sync::Notify::new(),
    ));
    let writers: Vec<_> = (0..6)
        .map(|n| {
            let (url, token, acks) = (url.clone(), token.clone(), acks.clone());
            tokio::spawn(async move {
                let http = reqwest::Client::new();
                let mut acked = Vec::new();
                for m in 0.. {
                    let text = format!("crash-w{n}-{m}");
                    match try_add(&http, &url, &token, &text).await {
                        Some(reply) if reply.starts_with("ok|") => {
                            acked.push(text);
                            acks.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                            acks.1.notify_one();
                        }
                        _ => break,
                    }
                }
                acked
            })
        })
        .collect();
    const BEFORE_THE_KILL: usize = 30;
    let counted = tokio::time::timeout(Duration::from_secs(60), async {
        while acks.0.load(std::sync::atomic::Ordering::SeqCst) < BEFORE_THE_KILL {
            acks.1.notified().await;
        }
    })
    .await;
    assert!(
        counted.is_ok(),
        "the writers made fewer than {BEFORE_THE_KILL} writes in 60 s"
    );
    let _ = gateway.kill();
    let _ = gateway.wait();
    let mut acked = Vec::new();
    for w in writers {
        acked.extend(w.await.unwrap_or_default());
    }
    assert!(acked.len() >= BEFORE_THE_KILL, "{} writes", acked.len());
    let script = "tab('mcp/workspace/crash'); var out = []; for (var i = 0; i < size(); ++i) out.push(str(read(i))); print(JSON.stringify(out))";
    let stored: Vec<String> =
        serde_json::from_str(&copyq.eval(script, b"").expect("read")).expect("json");
    for text in &acked {
        assert_eq!(
            stored.iter().filter(|s| *s == text).count(),
            1,
            "acknowledged write {text} not there exactly once"
        );
    }
    let (mut again, url) = spawn_serve(&copyq, data.path(), UNLIMITED, Stdio::null());
    let c = client(&url, &token).await;
    ok(
        &c,
        "mcp_write",
        json!({"mode": "add", "tab": "workspace/crash", "text": "after the crash"}),
    )
    .await;
    let _ = again.kill();
    let _ = again.wait();
    eprintln!(
        "faults: {} acknowledged writes before the SIGKILL, all in CopyQ",
        acked.len()
    );
}
