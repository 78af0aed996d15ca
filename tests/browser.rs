//! A real browser against the gateway: Debian's headless Chromium, driven by Playwright for Python
//! (tests/browser/install.sh installs both; nothing downloads a browser). The consent page is for a
//! person, and a test client that posts its form the way no browser does proves nothing about it:
//! here Chromium runs the whole OAuth flow on the default configuration (tests/browser/
//! consent_flow.py), a web page calls /mcp with fetch() from an allowed and from a foreign origin
//! (tests/browser/cors.py), and tests/browser/browser.sh approves a login the way OAuth CLIs use
//! it, as `$BROWSER`. Screenshots of every page land in target/screenshots.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Once;
use std::time::{Duration, Instant};

use copyq_mcp::oauth::passphrase;
use copyq_mcp::store::Store;
use serde_json::{Value, json};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const PASS: &str = "correct horse battery staple";
/// Longest one browser script may run before it is killed and the test fails.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(120);

fn screenshots() -> PathBuf {
    repo().join("target/screenshots")
}

fn ensure_installed() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        run_install("tests/browser/install.sh");
    });
}

/// The gateway on its default configuration, with the owner passphrase set in its store.
async fn oauth_gateway(tweak: impl FnOnce(&mut copyq_mcp::config::Settings)) -> Gateway {
    let gw = gateway_with(copyq(), tweak).await;
    let store = Store::open(&gw.settings.data_dir()).expect("store");
    store
        .set_passphrase_hash(&passphrase::hash(PASS).expect("hash"))
        .expect("passphrase");
    gw
}

/// Run `cmd` to completion within `limit` (killed after it), off the async runtime the gateway
/// shares: (exit code, stdout, stderr).
async fn run_bounded(mut cmd: Command, limit: Duration) -> (Option<i32>, String, String) {
    tokio::task::spawn_blocking(move || {
        let dir = tempfile::tempdir().expect("tempdir");
        let (out_path, err_path) = (dir.path().join("stdout"), dir.path().join("stderr"));
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out_path).expect("stdout file"))
            .stderr(std::fs::File::create(&err_path).expect("stderr file"))
            .spawn()
            .expect("spawn");
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status.code();
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        (status, read(&out_path), read(&err_path))
    })
    .await
    .expect("join")
}

/// A script of tests/browser in the Playwright venv; its one JSON line.
async fn script(name: &str, args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut cmd = Command::new(clients_dir().join("browser/bin/python"));
    cmd.arg(repo().join("tests/browser").join(name))
        .args(args)
        .env("COPYQ_MCP_SCREENSHOTS", screenshots())
        .envs(env.iter().copied());
    let (status, stdout, stderr) = run_bounded(cmd, SCRIPT_TIMEOUT).await;
    let line = stdout.lines().rev().find(|l| l.starts_with('{'));
    match line.map(serde_json::from_str::<Value>) {
        Some(Ok(v)) => v,
        _ => panic!(
            "{name} printed no JSON line (exit {status:?}, killed after {SCRIPT_TIMEOUT:?} if None)\n\
             stdout: {stdout}\nstderr: {stderr}"
        ),
    }
}

/// Takes the parts meant for people (texts, screenshots, timings) out of a script's JSON line and
/// checks that the screenshots it names were written.
fn for_people(v: &mut Value) -> Value {
    let obj = v.as_object_mut().expect("a JSON object");
    let shots = obj.remove("screenshots").unwrap_or(Value::Null);
    for s in shots.as_array().into_iter().flatten() {
        let path = screenshots().join(s.as_str().unwrap_or_default());
        assert!(
            path.metadata().is_ok_and(|m| m.len() > 1000),
            "screenshot {} missing or empty",
            path.display()
        );
    }
    json!({
        "texts": obj.remove("texts"),
        "raw": obj.remove("raw"),
        "seconds": obj.remove("seconds"),
        "screenshots": shots,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_consent_flow_in_chromium_on_the_default_config() {
    ensure_installed();
    let gw = oauth_gateway(|_| {}).await;
    let base = gw.base.clone();
    let mut out = script(
        "consent_flow.py",
        &["--base", &base],
        &[("COPYQ_MCP_TEST_PASSPHRASE", PASS)],
    )
    .await;
    let people = for_people(&mut out);
    assert!(
        out["ok"] == json!(true),
        "consent_flow.py failed at step {}: {}\nwhat it saw: {out:#}\nwhat the pages said: {people:#}",
        out["failed_at"],
        out["error"]
    );
    assert_eq!(
        out,
        json!({
            "ok": true,
            "discovery": {
                "status": 401,
                "resource_metadata": format!("{base}/.well-known/oauth-protected-resource/mcp"),
                "resource": format!("{base}/mcp"),
                "issuer": base,
                "pkce": ["S256"],
                "iss_parameter": true,
            },
            "registration": {"status": 201, "auth_method": "none", "secret": false},
            "consent": {
                "status": 200,
                "html": true,
                "names_app": true,
                "names_redirect_host": true,
                "roles": ["read", "write"],
                "says_history": true,
                "says_lifetimes": true,
                "says_revoke": true,
            },
            "wrong": {
                "status": 401,
                "form_again": true,
                "role_checked": ["write"],
                "message": true,
                "passphrase_cleared": true,
            },
            "approve": {
                "redirect_status": 303,
                "code": true,
                "state": true,
                "iss": base,
                "error": null,
            },
            "token": {
                "status": 200,
                "token_type": "Bearer",
                "expires_in": 3600,
                "refresh_token": true,
                "no_store": true,
            },
            "tools": ["mcp_read", "mcp_validate", "mcp_write"],
            "deny": {
                "redirect_status": 303,
                "error": "access_denied",
                "state": true,
                "iss": base,
                "code": false,
            },
            "errors": {
                "unknown_app": {"status_class": "4xx", "html": true},
                "bad_redirect": {"status_class": "4xx", "html": true},
                "expired": {"status_class": "4xx", "html": true},
            },
        }),
        "what the pages said: {people:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_web_page_calls_mcp_with_fetch_only_from_an_allowed_origin() {
    ensure_installed();
    copyq()
        .seed(
            "mcp/workspace/browser",
            &[Item::new("fetched by a web page | ✓", &["cors"], "")],
        )
        .expect("seed");
    let gw = gateway_with(copyq(), |s| {
        s.server.allowed_origins = vec!["http://app.example".into()];
    })
    .await;
    let mut out = script(
        "cors.py",
        &[
            "--base",
            &gw.base,
            "--token",
            &gw.read,
            "--allowed",
            "http://app.example",
            "--other",
            "http://other.example",
            "--expect",
            "fetched by a web page",
        ],
        &[],
    )
    .await;
    let people = for_people(&mut out);
    assert_eq!(
        out,
        json!({
            "ok": true,
            "allowed": {
                "origin": "http://app.example",
                "tool_call": {"status": 200, "is_error": false, "expected_text": true},
                "unauthorized": {"status": 401, "www_authenticate": true},
                "metadata": {"status": 200, "resource": format!("{}/mcp", gw.base)},
            },
            "other": {"origin": "http://other.example", "tool_call": {"rejected": true}},
        }),
        "what the pages saw: {people:#}"
    );
}

/// One request to a loopback callback server, as an OAuth CLI runs one: its query.
async fn one_callback(listener: tokio::net::TcpListener) -> String {
    let (mut conn, _) = listener.accept().await.expect("accept");
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = conn.read(&mut chunk).await.expect("read");
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let page = "<!doctype html><title>CLI</title><p>Logged in. You can close this window.</p>";
    let reply = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
        page.len()
    );
    conn.write_all(reply.as_bytes()).await.expect("write");
    let head = String::from_utf8_lossy(&buf);
    let target = head.split_whitespace().nth(1).unwrap_or_default();
    target
        .split_once('?')
        .map(|(_, q)| q)
        .unwrap_or("")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_sh_approves_a_cli_login_in_the_background() {
    ensure_installed();
    for tab in ["mcp/workspace/browser-scope", "browser-scope-ext"] {
        copyq().seed(tab, &items(&["x"])).expect("seed");
    }
    let gw = oauth_gateway(|_| {}).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let redirect = format!(
        "http://127.0.0.1:{}/cb",
        listener.local_addr().expect("addr").port()
    );
    let http = reqwest::Client::new();
    let reg: Value = http
        .post(format!("{}/register", gw.base))
        .json(&json!({"redirect_uris": [redirect], "token_endpoint_auth_method": "none", "client_name": "A CLI"}))
        .send()
        .await
        .expect("register")
        .json()
        .await
        .expect("registration JSON");
    let client_id = reg["client_id"].as_str().expect("client_id");
    let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    let url = url::Url::parse_with_params(
        &format!("{}/authorize", gw.base),
        &[
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", &redirect),
            // S256 of the verifier above (RFC 7636, appendix B).
            (
                "code_challenge",
                "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            ),
            ("code_challenge_method", "S256"),
            ("state", "cli-state"),
        ],
    )
    .expect("authorize URL");
    let dir = tempfile::tempdir().expect("tempdir");
    let result_file = dir.path().join("result.json");

    // The CLI: `$BROWSER <url>` must come back at once, before the callback is served (a CLI that
    // waits for it in the thread that serves the callback would deadlock otherwise).
    let mut cmd = Command::new(repo().join("tests/browser/browser.sh"));
    cmd.arg(url.as_str())
        .env("CLIENTS_DIR", clients_dir())
        .env("COPYQ_MCP_TEST_PASSPHRASE", PASS)
        .env("COPYQ_MCP_TEST_ROLE", "read")
        .env(
            "COPYQ_MCP_TEST_TABS",
            "list:mcp/workspace/browser-scope,browser-scope-ext",
        )
        .env("COPYQ_MCP_BROWSER_TAG", "browser-sh-test")
        .env("COPYQ_MCP_BROWSER_RESULT", &result_file)
        .env("COPYQ_MCP_SCREENSHOTS", screenshots());
    let started = Instant::now();
    let (status, _, stderr) = run_bounded(cmd, Duration::from_secs(10)).await;
    assert_eq!(status, Some(0), "browser.sh: {stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "browser.sh took {:?} to return",
        started.elapsed()
    );

    // Wait for the callback, or for approve.py's own account of a failure (it writes the file
    // once it is done), for a minute at most.
    let callback = tokio::spawn(one_callback(listener));
    let read_result = || {
        std::fs::read_to_string(&result_file)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while !callback.is_finished() {
        if let Some(r) = read_result().filter(|r| r["ok"] != json!(true)) {
            panic!("browser.sh did not approve: {r}");
        }
        assert!(Instant::now() < deadline, "no callback within 60 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let query = callback.await.expect("callback task");
    let mut result = Value::Null;
    for _ in 0..100 {
        if let Some(r) = read_result() {
            result = r;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let q: std::collections::HashMap<String, String> =
        url::form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
    assert_eq!(
        q.get("state").map(String::as_str),
        Some("cli-state"),
        "{q:?}"
    );
    assert_eq!(q.get("iss"), Some(&gw.base), "{q:?}");
    let code = q.get("code").unwrap_or_else(|| panic!("no code: {q:?}"));
    assert_eq!(result["ok"], json!(true), "{result}");
    assert_eq!(result["role"], json!("read"), "{result}");
    assert_eq!(result["callback_status"], json!(200), "{result}");

    // The CLI exchanges the code: a read grant sees the read tools only.
    let tok: Value = http
        .post(format!("{}/token", gw.base))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", &redirect),
            ("client_id", client_id),
            ("code_verifier", verifier),
        ])
        .send()
        .await
        .expect("token")
        .json()
        .await
        .expect("token JSON");
    let access = tok["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("{tok}"));
    let (status, _, body) = raw_post(
        &gw.url,
        Some(access),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    let mut names: Vec<&str> = v["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["mcp_read", "mcp_validate"]);

    // The tabs clicked and typed on the page are all this grant sees.
    let c = client(&gw.url, access).await;
    assert_eq!(
        ok(
            &c,
            "mcp_read",
            json!({"mode": "tree", "scope": "all", "max_items": 0, "max_depth": 9})
        )
        .await,
        "workspace/browser-scope [1]\nbrowser-scope-ext [1] [external]"
    );
}
