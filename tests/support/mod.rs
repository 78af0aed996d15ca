//! Shared by the integration tests: a private real CopyQ per test binary (or per suite), the gateway on port 0 in
//! front of it (or, for the suites of the HTTP edge, in front of no CopyQ: `edge.rs`), and a real MCP
//! client (rmcp's Streamable HTTP client) to drive it.
#![allow(dead_code)] // each test binary uses its own part of this

pub mod edge;
pub mod mix;
pub mod proxy;

#[allow(unused_imports)] // each test binary uses its own part of this
pub use edge::{edge_gateway, edge_gateway_over, edge_gateway_with};

use std::sync::OnceLock;

use copyq_mcp::app::{Application, token_service};
pub use copyq_mcp::auth::Role;
pub use copyq_mcp::backend::Item;
use copyq_mcp::config::Settings;
pub use copyq_mcp::sandbox::PrivateCopyq;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

static COPYQ: OnceLock<PrivateCopyq> = OnceLock::new();

/// This test binary's private CopyQ, started on first use. A binary of several suites gives
/// each its own instead, with [`private_copyq`].
pub fn copyq() -> &'static PrivateCopyq {
    private_copyq(&COPYQ)
}

/// The private CopyQ kept in `cell`, started on first use.
pub fn private_copyq(cell: &'static OnceLock<PrivateCopyq>) -> &'static PrivateCopyq {
    cell.get_or_init(|| match PrivateCopyq::start() {
        Ok(c) => c,
        Err(e) => panic!("cannot start a private CopyQ (apt-get install -y copyq xvfb): {e}"),
    })
}

pub struct Gateway {
    pub url: String,
    pub base: String,
    pub read: String,
    pub write: String,
    pub settings: Settings,
    shutdown: CancellationToken,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

pub async fn gateway(copyq: &PrivateCopyq) -> Gateway {
    gateway_with(copyq, |_| {}).await
}

/// `COPYQ_MCP_TEST_LOG=1` (or a filter: `debug`, `copyq_mcp=trace`) shows the log of the gateways
/// the tests run in process (`gateway_with`), on the test's output: `cargo test NAME` prints it
/// for a failing test, `-- --nocapture` always. Unset, empty or `0`: no log, as in CI.
fn show_log() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    let Some(filter) = std::env::var("COPYQ_MCP_TEST_LOG")
        .ok()
        .filter(|v| !v.is_empty() && v != "0")
    else {
        return;
    };
    ONCE.call_once(|| {
        let filter = if filter == "1" { "info".into() } else { filter };
        // Another subscriber already set (a test that captures the log itself) wins.
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_test_writer()
            .try_init();
    });
}

/// A gateway on 127.0.0.1:0 against `copyq`, with settings changed by `tweak`.
pub async fn gateway_with(copyq: &PrivateCopyq, tweak: impl FnOnce(&mut Settings)) -> Gateway {
    let mut settings = loopback_settings();
    copyq.configure(&mut settings);
    // The suite runs once per backend (tests/run.sh): COPYQ_MCP_TEST_BACKEND=cli|socket.
    if let Ok(backend) = std::env::var("COPYQ_MCP_TEST_BACKEND") {
        settings.copyq.backend = copyq_mcp::config::BackendKind::parse(&backend)
            .unwrap_or_else(|| panic!("COPYQ_MCP_TEST_BACKEND={backend}: auto, socket or cli"));
    }
    tweak(&mut settings);
    launch(settings, None).await
}

/// The defaults, listening on 127.0.0.1:0 (and the log shown when asked for).
fn loopback_settings() -> Settings {
    show_log();
    let mut settings = Settings::defaults().expect("default settings");
    settings.server.bind = "127.0.0.1:0".parse().expect("addr");
    settings
}

/// Start a gateway with `settings`, over `backend` or (none) the one `copyq.backend` names, with
/// a read and a write token issued first as the owner would.
async fn launch(settings: Settings, backend: Option<copyq_mcp::backend::Backend>) -> Gateway {
    let tokens = token_service(&settings).expect("token service");
    let read = tokens.issue("test-read", Role::Read, None).expect("issue");
    let write = tokens
        .issue("test-write", Role::Write, None)
        .expect("issue");
    let app = match backend {
        Some(backend) => Application::with_backend(&settings, backend).await,
        None => Application::build(&settings).await,
    }
    .expect("gateway starts");
    let addr = app.local_addr();
    let scheme = if settings.tls_files().is_some() {
        "https"
    } else {
        "http"
    };
    let shutdown = app.shutdown_token();
    tokio::spawn(app.run_until_stopped());
    Gateway {
        url: format!("{scheme}://{addr}/mcp"),
        base: format!("{scheme}://{addr}"),
        read,
        write,
        settings,
        shutdown,
    }
}

/// A token for `gw` with `role` that covers only the tabs `words` name (`token issue --tabs`).
pub fn token_covering(gw: &Gateway, role: Role, words: &[&str]) -> String {
    let tabs = copyq_mcp::auth::Coverage::parse(words.iter().copied()).expect("a coverage");
    let spec = copyq_mcp::auth::TokenSpec {
        subject: "scoped-agent",
        role,
        ttl: None,
        audience: None,
        grant: None,
        tabs: &tabs,
    };
    token_service(&gw.settings)
        .expect("token service")
        .issue_spec(&spec)
        .expect("issue")
        .token
}

/// The owner's command `copyq-mcp ARGS` on `gw`'s data dir and CopyQ (its session, settings,
/// command and, when set, socket): whether it succeeded, its stdout and its stderr.
pub fn owner(gw: &Gateway, args: &[&str]) -> (bool, String, String) {
    owner_with(gw, args, &[])
}

/// As [`owner`], with `env` set too (e.g. `COPYQ_MCP__COPYQ__BACKEND` to pick its backend).
pub fn owner_with(gw: &Gateway, args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let c = &gw.settings.copyq;
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_copyq-mcp"));
    cmd.envs(env.iter().copied());
    cmd.args(args)
        .arg("--data-dir")
        .arg(gw.settings.data_dir())
        .env("COPYQ_MCP__COPYQ__SESSION", &c.session)
        .env("COPYQ_MCP__COPYQ__SETTINGS_PATH", &c.settings_path)
        .env("COPYQ_MCP__COPYQ__COMMAND", &c.command);
    if !c.socket.is_empty() {
        cmd.env("COPYQ_MCP__COPYQ__SOCKET", &c.socket);
    }
    let out = cmd.output().expect("run copyq-mcp");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub use mix::Client;

/// A spawned `copyq-mcp`, killed and reaped when dropped: a test that fails half-way (a panic
/// between spawn and kill) leaves no gateway running after the suite.
pub struct Spawned(pub std::process::Child);

impl std::ops::Deref for Spawned {
    type Target = std::process::Child;
    fn deref(&self) -> &std::process::Child {
        &self.0
    }
}

impl std::ops::DerefMut for Spawned {
    fn deref_mut(&mut self) -> &mut std::process::Child {
        &mut self.0
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        // A child already reaped is not signalled again (std keeps its status).
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A real MCP client session over Streamable HTTP with `token`.
pub async fn client(url: &str, token: &str) -> Client {
    mix::connect(url, token).await.expect("MCP client connects")
}

/// The reply of a tool call: (isError, text).
pub async fn call(client: &Client, tool: &str, args: Value) -> (bool, String) {
    assert!(args.is_object(), "arguments are an object");
    mix::try_call(client, tool, args)
        .await
        .expect("tool call answers")
}

/// A successful tool call's text; panics with the text if it was an error.
pub async fn ok(client: &Client, tool: &str, args: Value) -> String {
    let (is_error, text) = call(client, tool, args).await;
    assert!(!is_error, "unexpected tool error: {text}");
    text
}

/// A failed tool call's text; panics if it succeeded.
pub async fn err(client: &Client, tool: &str, args: Value) -> String {
    let (is_error, text) = call(client, tool, args).await;
    assert!(is_error, "expected a tool error, got: {text}");
    text
}

/// The backend a gateway with these settings reports in `/healthz`.
pub fn health_backend(settings: &Settings) -> &'static str {
    if settings.copyq.backend == copyq_mcp::config::BackendKind::Cli {
        "cli"
    } else {
        "socket"
    }
}

/// Where a gateway with these settings looks for CopyQ, as its errors name it: the socket path,
/// or (CLI backend) the `copyq` command with its session and settings path.
pub fn copyq_target(settings: &Settings) -> String {
    if settings.copyq.backend == copyq_mcp::config::BackendKind::Cli {
        let c = &settings.copyq;
        format!(
            "copyq CLI {} (session {}, settings path {})",
            c.command, c.session, c.settings_path
        )
    } else {
        let path = settings.copyq_socket().expect("socket path");
        format!("socket {}", path.display())
    }
}

/// The tool error while CopyQ is down, naming where the gateway looked.
pub fn copyq_unreachable(settings: &Settings) -> String {
    format!(
        "error|COPYQ_ERROR|CopyQ is not running or not reachable at {}; start the CopyQ server \
         (`copyq &`) and retry, or run `copyq-mcp doctor` where the gateway runs to see what it tried",
        copyq_target(settings)
    )
}

/// What `/healthz` answers while CopyQ is down, through `backend`.
pub fn health_down(settings: &Settings, backend: &str) -> Value {
    serde_json::json!({"status": "degraded", "copyq": "down", "backend": backend,
        "tried": copyq_target(settings),
        "help": "start CopyQ in the desktop session the gateway uses, or run `copyq-mcp doctor` where the gateway runs"})
}

/// What `/healthz` answers when `copyq` is up, through `backend`: CopyQ's version from the CLI,
/// the socket layout (derived here from `version()`: Qt 5 or 6; before 7.1, 7.1-13, 14 and later).
pub fn health_up(copyq: &PrivateCopyq, backend: &str) -> Value {
    let out = copyq.eval("print(version())", b"").expect("version()");
    let mut lines = out.lines();
    let version = lines
        .next()
        .and_then(|l| l.split_whitespace().last())
        .map(|v| v.trim_start_matches('v').to_owned())
        .expect("a version");
    let qt6 = lines.any(|l| l.starts_with("Qt: 6"));
    let number: Vec<u32> = version.split('.').filter_map(|n| n.parse().ok()).collect();
    let at_least = |major, minor| number.as_slice() >= [major, minor].as_slice();
    let range = if at_least(14, 0) {
        ">= 14.0"
    } else if at_least(7, 1) {
        "7.1 - 13.x"
    } else {
        "< 7.1"
    };
    let qt = if qt6 { "Qt 6" } else { "Qt 5" };
    match backend {
        "cli" => serde_json::json!({"status": "ok", "copyq": "up", "backend": "cli",
                                    "copyq_version": version}),
        _ => serde_json::json!({"status": "ok", "copyq": "up", "backend": "socket",
                                "protocol": format!("{qt}, CopyQ {range}")}),
    }
}

/// The texts of `tab`'s items, top first, straight from CopyQ (none when there is no such tab).
pub fn tab_texts(copyq: &PrivateCopyq, tab: &str) -> Vec<String> {
    let script = "var t = str(input()); var out = []; if (tab().indexOf(t) !== -1) { tab(t); \
                  for (var i = 0; i < size(); ++i) out.push(str(read(i))); } print(JSON.stringify(out))";
    serde_json::from_str(&copyq.eval(script, tab.as_bytes()).expect("read tab")).expect("json")
}

/// CopyQ's save delays, as `name=value` pairs.
pub fn save_delays(copyq: &PrivateCopyq) -> String {
    let script = "print(['added', 'removed', 'moved', 'modified', 'edited'].map(function (k) { \
                  return k + '=' + config('save_delay_ms_on_item_' + k); }).join(','))";
    copyq.eval(script, b"").expect("config")
}

/// `copyq`'s major version, from its `version()`.
pub fn major(copyq: &PrivateCopyq) -> u32 {
    let out = copyq.eval("print(version())", b"").expect("version()");
    out.split_whitespace()
        .filter_map(|w| w.trim_start_matches('v').split('.').next()?.parse().ok())
        .next()
        .unwrap_or_else(|| panic!("no version in {out:?}"))
}

/// Seed `tab` with one item and show it in CopyQ's window, which keeps it loaded: a write to it
/// zeroes the save delays.
pub fn pinned(copyq: &PrivateCopyq, tab: &str) {
    copyq.seed(tab, &items(&["first"])).expect("seed");
    open_in_window(copyq, tab);
}

/// Show `tab` in CopyQ's window, as its owner would: CopyQ then keeps it loaded.
pub fn open_in_window(copyq: &PrivateCopyq, tab: &str) {
    copyq
        .eval(&format!("show('{tab}')"), b"")
        .expect("show the tab");
    let left = copyq
        .eval(&format!("print(JSON.stringify(unload('{tab}')))"), b"")
        .expect("unload");
    assert_eq!(left, "[]", "the tab is visible, so CopyQ keeps it loaded");
}

pub fn copyq_tabs(copyq: &PrivateCopyq) -> Vec<String> {
    let out = copyq
        .eval("print(JSON.stringify(tab()))", b"")
        .expect("copyq tab()");
    serde_json::from_str(&out).expect("tab list")
}

pub fn items(texts: &[&str]) -> Vec<Item> {
    texts.iter().map(|t| Item::new(t, &[], "")).collect()
}

/// One raw JSON-RPC POST to /mcp, no session: (status, headers, body).
pub async fn raw_post(
    url: &str,
    token: Option<&str>,
    body: Value,
) -> (u16, reqwest::header::HeaderMap, String) {
    let mut req = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    let res = req.send().await.expect("HTTP answers");
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    (status, headers, res.text().await.unwrap_or_default())
}

/// `copyq-mcp serve` (the real binary) on 127.0.0.1:0 against `copyq`, with `env` added: the child
/// and the /mcp URL from its listening line.
pub fn spawn_serve(
    copyq: &PrivateCopyq,
    data_dir: &std::path::Path,
    env: &[(&str, &str)],
    stderr: std::process::Stdio,
) -> (Spawned, String) {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_copyq-mcp"))
        .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir)
        .env("COPYQ_MCP__COPYQ__SESSION", copyq.session())
        .env("COPYQ_MCP__COPYQ__SETTINGS_PATH", copyq.settings_path())
        .env("COPYQ_MCP__COPYQ__COMMAND", copyq.cli_command())
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("spawn copyq-mcp serve");
    let mut child = Spawned(child);
    let url = listening_url(&mut child);
    (child, url)
}

/// The /mcp URL of a `copyq-mcp serve` child spawned with a piped stdout, from its first line
/// (`... listening on http://127.0.0.1:PORT/mcp`).
pub fn listening_url(child: &mut std::process::Child) -> String {
    use std::io::BufRead;
    let mut line = String::new();
    if let Some(out) = child.stdout.as_mut() {
        std::io::BufReader::new(out)
            .read_line(&mut line)
            .expect("listening line");
    }
    let url = line
        .split_whitespace()
        .last()
        .unwrap_or_default()
        .to_owned();
    assert!(
        line.contains("listening on http://127.0.0.1:") && url.ends_with("/mcp"),
        "{line}"
    );
    url
}

/// The repository's root.
pub fn repo() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Run a third-party client's `cmd` off the async runtime (the gateway shares it) and parse the
/// one JSON line it prints; `what` names it when it fails (its stderr is shown).
pub async fn client_json(mut cmd: std::process::Command, what: &str) -> Value {
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .unwrap_or_else(|e| panic!("run {what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{what} printed no JSON ({e}): {:?}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Where the pinned third-party clients are installed: `$CLIENTS_DIR`, else target/clients.
pub fn clients_dir() -> std::path::PathBuf {
    std::env::var_os("CLIENTS_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| repo().join("target/clients"))
}

/// Run an idempotent install script (`tests/.../install.sh`) into [`clients_dir`]; panics with
/// its output when it fails.
pub fn run_install(script: &str) {
    let out = std::process::Command::new("bash")
        .arg(repo().join(script))
        .env("CLIENTS_DIR", clients_dir())
        .output()
        .unwrap_or_else(|e| panic!("run {script}: {e}"));
    assert!(
        out.status.success(),
        "{script} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
