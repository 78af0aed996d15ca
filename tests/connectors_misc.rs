//! Connector clients people actually install, against the gateway over HTTP: `mcp-remote` (npm; a
//! stdio server that Claude Desktop-style configs start, driven here by the TypeScript SDK's stdio
//! client), the MCP Inspector CLI 2.x (npm; Node 22) and the `fastmcp` Python client (PyPI).
//! `tests/connectors2/install.sh` installs them, pinned, into target/clients/connectors2 and
//! `tests/connectors2/run.sh` runs one (see its header); every run prints one JSON line.
//!
//! Each client, with a bearer token: a read token sees exactly `mcp_read` and `mcp_validate` and
//! cannot write; a write token sees the three tools, adds to a `workspace/...` tab and reads the
//! item back (the gateway's exact replies; the item is in CopyQ). Through OAuth: the client's own
//! flow (discovery, registration, PKCE, its loopback callback), the consent page approved in a
//! real headless Chromium (`$BROWSER` -> tests/browser/browser.sh), a short access-token lifetime,
//! and the session still working after it: one consent, one grant, a used refresh token in the
//! gateway's store. And OAuth with the connector URL given as `http://localhost:PORT/mcp`: the
//! resource the client asks for is that URL.

mod support;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Once;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use copyq_mcp::store::Store;
use serde_json::{Value, json};
use support::*;

const PASSPHRASE: &str = "correct horse battery staple";
/// Access-token lifetime of the OAuth gateways, and how long the clients then wait.
const ACCESS_TTL: &str = "10s";
const PAST_TTL: &str = "13";

fn ensure_installed() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        run_install("tests/connectors2/install.sh");
    });
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Connector {
    McpRemote,
    Inspector,
    Fastmcp,
}

impl Connector {
    fn arg(self) -> &'static str {
        match self {
            Connector::McpRemote => "mcp-remote",
            Connector::Inspector => "inspector",
            Connector::Fastmcp => "fastmcp",
        }
    }

    /// The `client_name` each registers with (what the owner sees in `clients list`).
    fn registered_name(self) -> &'static str {
        match self {
            Connector::McpRemote => "MCP CLI Proxy",
            Connector::Inspector => "MCP Inspector",
            Connector::Fastmcp => "copyq-mcp fastmcp test",
        }
    }

    /// The `client` field of the driver's JSON: the pinned version really ran.
    fn version(self) -> &'static str {
        match self {
            Connector::McpRemote => "mcp-remote 0.15.1",
            Connector::Inspector => "inspector 2.12.0",
            Connector::Fastmcp => "fastmcp 4.2.3",
        }
    }
}

/// What one run.sh invocation left: its JSON line and the state directory.
struct Run {
    out: Value,
    state: tempfile::TempDir,
}

impl Run {
    fn results(&self) -> &[Value] {
        self.out["results"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The authorize URLs the client handed to `$BROWSER`.
    fn browser_opens(&self) -> Vec<String> {
        std::fs::read_to_string(self.state.path().join("opens.log"))
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect()
    }

    /// The headless browser's JSON result line for the `n`th open (1-based).
    fn browser_result(&self, n: usize) -> Value {
        let out = std::fs::read_to_string(self.state.path().join(format!("browser-{n}.out")))
            .unwrap_or_default();
        out.lines()
            .rev()
            .find_map(|l| serde_json::from_str(l).ok())
            .unwrap_or(Value::Null)
    }
}

fn kill_group(pgid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stderr(Stdio::null())
        .status();
}

/// Kill every browser process group the run started (they live in sessions of their own).
fn kill_browsers(state: &Path) {
    for pg in std::fs::read_to_string(state.join("browser.pgids"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
    {
        kill_group(pg);
    }
}

/// `run.sh CONNECTOR ARGS...` in a process group of its own, off the async runtime (the gateway
/// shares it); killed with everything it started after `timeout`. Panics unless it exits 0 with
/// one JSON line.
async fn run(
    connector: Connector,
    args: Vec<String>,
    env: Vec<(&'static str, String)>,
    timeout: Duration,
) -> Run {
    let state = tempfile::tempdir().expect("state dir");
    let state_path = state.path().to_owned();
    let mut cmd = Command::new("bash");
    cmd.arg(repo().join("tests/connectors2/run.sh"))
        .arg(connector.arg())
        .args(&args)
        .env("CLIENTS_DIR", clients_dir())
        .env("CONNECTORS2_STATE", &state_path)
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let (status, stdout, stderr) = tokio::task::spawn_blocking(move || {
        let mut child = cmd.spawn().expect("spawn run.sh");
        let mut pipes = (child.stdout.take(), child.stderr.take());
        let out = std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(p) = pipes.0.as_mut() {
                let _ = p.read_to_string(&mut s);
            }
            s
        });
        let err = std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(p) = pipes.1.as_mut() {
                let _ = p.read_to_string(&mut s);
            }
            s
        });
        let deadline = Instant::now() + timeout;
        let status = loop {
            if let Some(s) = child.try_wait().expect("wait run.sh") {
                break Ok(s);
            }
            // A consent that failed in the browser: the client would only wait for its callback.
            let failed = browser_failure(&state_path);
            if Instant::now() > deadline || failed.is_some() {
                kill_group(child.id());
                kill_browsers(&state_path);
                let _ = child.wait();
                break Err(failed);
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        kill_browsers(&state_path);
        (
            status,
            out.join().unwrap_or_default(),
            err.join().unwrap_or_default(),
        )
    })
    .await
    .expect("join");
    let browser_logs = browser_logs(state.path());
    let status = status.unwrap_or_else(|failed| match failed {
        Some(b) => panic!(
            "{connector:?}: the consent failed in the browser: {b}; killed the client.\nstdout: {stdout}\nstderr: {stderr}{browser_logs}"
        ),
        None => panic!(
            "{connector:?} timed out after {timeout:?}; killed.\nstdout: {stdout}\nstderr: {stderr}{browser_logs}"
        ),
    });
    assert!(
        status.success(),
        "{connector:?} failed ({status}):\nstdout: {stdout}\nstderr: {stderr}{browser_logs}"
    );
    let out: Value = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("{connector:?} printed no JSON: {stdout}\nstderr: {stderr}"));
    assert_eq!(out["client"], json!(connector.version()), "{out}");
    Run { out, state }
}

/// The `error` of the first browser run whose JSON result says `"ok": false`.
fn browser_failure(state: &Path) -> Option<String> {
    (1..)
        .map(|n| state.join(format!("browser-{n}.out")))
        .take_while(|p| p.exists())
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .flat_map(|out| {
            out.lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .collect::<Vec<_>>()
        })
        .find(|v| v["ok"] == json!(false))
        .map(|v| v["error"].as_str().unwrap_or("(no error given)").to_owned())
}

fn browser_logs(state: &Path) -> String {
    let mut s = String::new();
    for n in 1.. {
        let Ok(err) = std::fs::read_to_string(state.join(format!("browser-{n}.err"))) else {
            break;
        };
        let out =
            std::fs::read_to_string(state.join(format!("browser-{n}.out"))).unwrap_or_default();
        s.push_str(&format!(
            "\n--- browser {n} stdout ---\n{out}\n--- browser {n} stderr ---\n{err}"
        ));
    }
    s
}

fn words(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// A tab of its own per run: `workspace/c2-<connector>-<what>-<time>`.
fn unique_tab(connector: Connector, what: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!(
        "workspace/c2-{}-{what}-{}-{nanos}",
        connector.arg(),
        std::process::id()
    )
}

const READ_TOOLS: [&str; 2] = ["mcp_read", "mcp_validate"];
const WRITE_TOOLS: [&str; 3] = ["mcp_read", "mcp_write", "mcp_validate"];

/// A read grant's `mcp_write` call: the tool does not exist for it.
fn assert_refused(connector: Connector, got: &Value) {
    match connector {
        // The Inspector checks the listing first: the gateway never showed it mcp_write.
        Connector::Inspector => assert_eq!(
            (&got["cliError"], &got["message"]),
            (
                &json!("tool_not_found"),
                &json!("Tool 'mcp_write' not found on server.")
            ),
            "{connector:?}: {got}"
        ),
        _ => assert_eq!(
            got["code"],
            json!(-32602),
            "{connector:?}: a read grant's mcp_write is an unknown tool: {got}"
        ),
    }
}

fn add_args(tab: &str, text: &str) -> String {
    json!({"mode": "add", "tab": tab, "text": text}).to_string()
}

fn list_args(tab: &str) -> String {
    json!({"mode": "list", "tab": tab}).to_string()
}

fn added_reply(tab: &str, text: &str) -> Value {
    json!({"isError": false, "text": format!(
        "ok|mode:add|tab:{tab}|full_path:mcp/{tab}|index:0|text_len:{}|tags:0|note:False",
        text.chars().count()
    )})
}

fn listed_reply(tab: &str, text: &str) -> Value {
    json!({"isError": false, "text": format!(
        "mode:list|tab:{tab}|full_path:mcp/{tab}|total:1|showing:0-0\n0|\"{text}\"|[]"
    )})
}

/// (items, text of row 0) of CopyQ tab `full_path`, straight from CopyQ; None if no such tab.
fn copyq_tab(full_path: &str) -> Option<(usize, String)> {
    if !copyq_tabs(copyq()).iter().any(|t| t == full_path) {
        return None;
    }
    let out = copyq()
        .eval(
            "tab(str(input())); print(size() + '\\n' + str(read(0)))",
            full_path.as_bytes(),
        )
        .expect("copyq eval");
    let (n, text) = out.split_once('\n').expect("size and text");
    Some((n.parse().expect("size"), text.to_owned()))
}

async fn bearer(connector: Connector) {
    ensure_installed();
    let gw = gateway(copyq()).await;
    let tab = unique_tab(connector, "bearer");
    let text = format!("{} bearer | ✓", connector.arg());

    let got = run(
        connector,
        [
            words(&[
                "--url",
                &gw.url,
                "--token",
                &gw.read,
                "list",
                "call",
                "mcp_write",
            ]),
            vec![add_args(&tab, "must not land")],
        ]
        .concat(),
        vec![],
        Duration::from_secs(90),
    )
    .await;
    let r = got.results();
    assert_eq!(r.len(), 2, "{}", got.out);
    assert_eq!(
        r[0],
        json!({"tools": READ_TOOLS}),
        "{connector:?} read token"
    );
    assert_refused(connector, &r[1]);
    assert_eq!(copyq_tab(&format!("mcp/{tab}")), None, "{connector:?}");

    let got = run(
        connector,
        [
            words(&[
                "--url",
                &gw.url,
                "--token",
                &gw.write,
                "list",
                "call",
                "mcp_write",
            ]),
            vec![add_args(&tab, &text)],
            words(&["call", "mcp_read"]),
            vec![list_args(&tab)],
        ]
        .concat(),
        vec![],
        Duration::from_secs(90),
    )
    .await;
    let r = got.results();
    assert_eq!(r.len(), 3, "{}", got.out);
    assert_eq!(
        r[0],
        json!({"tools": WRITE_TOOLS}),
        "{connector:?} write token"
    );
    assert_eq!(r[1], added_reply(&tab, &text), "{connector:?}");
    assert_eq!(r[2], listed_reply(&tab, &text), "{connector:?}");
    assert_eq!(
        copyq_tab(&format!("mcp/{tab}")),
        Some((1, text.clone())),
        "{connector:?}: the item is in CopyQ"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_remote_bearer() {
    bearer(Connector::McpRemote).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspector_cli_bearer() {
    bearer(Connector::Inspector).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_bearer() {
    bearer(Connector::Fastmcp).await;
}

/// A gateway with its own state database (so its grants and refresh tokens are this test's
/// alone), the owner's passphrase set and a short access-token lifetime.
async fn oauth_gateway() -> (Gateway, tempfile::TempDir) {
    let data = tempfile::tempdir().expect("data dir");
    let dir = data.path().display().to_string();
    let gw = gateway_with(copyq(), move |s| {
        s.data_dir = dir;
        s.oauth.access_token_ttl = copyq_mcp::auth::parse_ttl(ACCESS_TTL).expect("ttl");
    })
    .await;
    Store::open(&gw.settings.data_dir())
        .expect("store")
        .set_passphrase_hash(&copyq_mcp::oauth::passphrase::hash(PASSPHRASE).expect("hash"))
        .expect("passphrase");
    (gw, data)
}

/// tests/browser/install.sh once (Playwright for the headless Chromium), so that no browser run
/// has to install it on its clock.
fn ensure_browser_installed() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let script = repo().join("tests/browser/install.sh");
        if !script.exists() || std::env::var_os("CONNECTORS2_BROWSER").is_some() {
            return; // browser() names what is missing; an explicit browser brings its own
        }
        run_install("tests/browser/install.sh");
    });
}

fn browser() -> String {
    ensure_browser_installed();
    let default = repo().join("tests/browser/browser.sh");
    let browser =
        std::env::var("CONNECTORS2_BROWSER").unwrap_or_else(|_| default.display().to_string());
    assert!(
        Path::new(&browser).exists(),
        "no headless browser for the consent page at {browser} (tests/browser/browser.sh; \
         CONNECTORS2_BROWSER overrides)"
    );
    browser
}

fn browser_env(role: &str) -> Vec<(&'static str, String)> {
    vec![
        ("CONNECTORS2_BROWSER", browser()),
        ("COPYQ_MCP_TEST_PASSPHRASE", PASSPHRASE.to_owned()),
        ("COPYQ_MCP_TEST_ROLE", role.to_owned()),
    ]
}

/// Used refresh tokens of grant `grant_id`, straight from the state database.
fn used_refresh_tokens(data_dir: &Path, grant_id: &str) -> i64 {
    let db = rusqlite::Connection::open_with_flags(
        data_dir.join("copyq-mcp.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("state database");
    db.query_row(
        "SELECT count(*) FROM refresh_tokens WHERE grant_id = ?1 AND used = 1",
        [grant_id],
        |r| r.get(0),
    )
    .expect("refresh tokens")
}

/// The one OAuth grant the client got: its role, and each must be the only one.
fn only_grant(gw: &Gateway, connector: Connector) -> copyq_mcp::store::GrantInfo {
    let grants = Store::open(&gw.settings.data_dir())
        .expect("store")
        .grants()
        .expect("grants");
    assert_eq!(
        grants.len(),
        1,
        "{connector:?}: one consent, one grant: {grants:?}"
    );
    let g = grants.into_iter().next().expect("grant");
    assert_eq!(g.client_name, connector.registered_name(), "{g:?}");
    assert!(!g.revoked, "{g:?}");
    g
}

fn assert_one_browser_consent(connector: Connector, run: &Run, role: &str) {
    let opens = run.browser_opens();
    assert_eq!(
        opens.len(),
        1,
        "{connector:?}: exactly one consent in the browser: {opens:?}"
    );
    assert!(
        opens[0].contains("/authorize?") && opens[0].contains("code_challenge_method=S256"),
        "{connector:?}: {}",
        opens[0]
    );
    let b = run.browser_result(1);
    assert_eq!(b["ok"], json!(true), "{connector:?}: browser: {b}");
    assert_eq!(b["role"], json!(role), "{connector:?}: browser: {b}");
}

/// OAuth, write grant, approved in the browser; then past the access token's lifetime the same
/// client keeps working on a refreshed token.
async fn oauth_write_and_refresh(connector: Connector) {
    ensure_installed();
    let (gw, _data) = oauth_gateway().await;
    let tab = unique_tab(connector, "oauth");
    let text = format!("{} oauth | ✓", connector.arg());
    let got = run(
        connector,
        [
            words(&["--url", &gw.url, "--oauth", "list", "call", "mcp_write"]),
            vec![add_args(&tab, &text)],
            words(&["call", "mcp_read"]),
            vec![list_args(&tab)],
            words(&["sleep", PAST_TTL, "call", "mcp_read"]),
            vec![list_args(&tab)],
            words(&["list"]),
        ]
        .concat(),
        browser_env("write"),
        Duration::from_secs(240),
    )
    .await;
    assert_one_browser_consent(connector, &got, "write");
    let r = got.results();
    assert_eq!(r.len(), 6, "{}", got.out);
    assert_eq!(r[0], json!({"tools": WRITE_TOOLS}), "{connector:?}");
    assert_eq!(r[1], added_reply(&tab, &text), "{connector:?}");
    assert_eq!(r[2], listed_reply(&tab, &text), "{connector:?}");
    assert_eq!(
        r[4],
        listed_reply(&tab, &text),
        "{connector:?}: after the first access token expired"
    );
    assert_eq!(r[5], json!({"tools": WRITE_TOOLS}), "{connector:?}");
    assert_eq!(
        copyq_tab(&format!("mcp/{tab}")),
        Some((1, text.clone())),
        "{connector:?}: the item is in CopyQ"
    );
    let grant = only_grant(&gw, connector);
    assert_eq!(grant.role, "write", "{grant:?}");
    let used = used_refresh_tokens(&gw.settings.data_dir(), &grant.grant_id);
    println!("{connector:?}: {used} refresh token(s) used");
    assert!(
        used >= 1,
        "{connector:?}: the client refreshed (a used refresh token in the store), {used} used"
    );
}

/// OAuth, read grant approved in the browser: the two read tools only, and no way to write.
async fn oauth_read(connector: Connector) {
    oauth_read_at(connector, |url| url.to_owned()).await;
}

/// `oauth_read` with the connector URL the client is given made from the gateway's by `url`.
async fn oauth_read_at(connector: Connector, url: impl FnOnce(&str) -> String) {
    ensure_installed();
    let (gw, _data) = oauth_gateway().await;
    let tab = unique_tab(connector, "oauth-read");
    let url = url(&gw.url);
    let got = run(
        connector,
        [
            words(&["--url", &url, "--oauth", "list", "call", "mcp_write"]),
            vec![add_args(&tab, "must not land")],
        ]
        .concat(),
        browser_env("read"),
        Duration::from_secs(180),
    )
    .await;
    assert_one_browser_consent(connector, &got, "read");
    let authorize = url::Url::parse(&got.browser_opens()[0]).expect("authorize URL");
    let resource = authorize
        .query_pairs()
        .find(|(k, _)| k == "resource")
        .map(|(_, v)| v.into_owned());
    assert_eq!(
        resource.as_deref(),
        Some(url.as_str()),
        "{connector:?}: the resource is the URL it was given"
    );
    let r = got.results();
    assert_eq!(r.len(), 2, "{}", got.out);
    assert_eq!(
        r[0],
        json!({"tools": READ_TOOLS}),
        "{connector:?} read grant"
    );
    assert_refused(connector, &r[1]);
    assert_eq!(copyq_tab(&format!("mcp/{tab}")), None, "{connector:?}");
    assert_eq!(only_grant(&gw, connector).role, "read");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_remote_oauth_write_and_refresh() {
    oauth_write_and_refresh(Connector::McpRemote).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspector_cli_oauth_write_and_refresh() {
    oauth_write_and_refresh(Connector::Inspector).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_oauth_write_and_refresh() {
    oauth_write_and_refresh(Connector::Fastmcp).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_remote_oauth_read() {
    oauth_read(Connector::McpRemote).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspector_cli_oauth_read() {
    oauth_read(Connector::Inspector).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_oauth_read() {
    oauth_read(Connector::Fastmcp).await;
}

/// The connector URL as `http://localhost:PORT/mcp` (the gateway listens on 127.0.0.1, no public
/// URL set): the resource and metadata follow the loopback name the client used, which the
/// clients check against the URL they were given.
fn localhost(url: &str) -> String {
    url.replacen("://127.0.0.1:", "://localhost:", 1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_remote_oauth_via_localhost() {
    oauth_read_at(Connector::McpRemote, localhost).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspector_cli_oauth_via_localhost() {
    oauth_read_at(Connector::Inspector, localhost).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_oauth_via_localhost() {
    oauth_read_at(Connector::Fastmcp, localhost).await;
}
