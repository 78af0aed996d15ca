//! Connector CLIs against the gateway, each through its own MCP client: Claude Code and Codex
//! (`tests/connectors/install.sh`, pinned), with a bearer token and through OAuth with the consent
//! page approved in headless Chromium (`tests/browser/browser.sh` as `$BROWSER`), and a refresh
//! after the first access token expired. Both only call tools when a model asks, so a scripted
//! stand-in model API on loopback (`tests/connectors/model.py`) asks: with a read grant it looks at
//! the tools it was offered (only mcp_read and mcp_validate), with a write grant it adds an item to
//! a workspace tab and reads it back. `tests/connectors/{claude,codex}.sh` run one client and print
//! lines that are compared here exactly.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use support::*;

/// One client run at a time: the machine is small and each CLI is heavy.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
static RUN: AtomicUsize = AtomicUsize::new(0);

const PASSPHRASE: &str = "connectors: correct horse battery staple";
/// Short enough that a test outlives the first access token, long enough for a login.
const ACCESS_TTL_SECS: u64 = 15;
/// Whole script run (install excluded); each client command inside is bounded too.
const RUN_TIMEOUT: Duration = Duration::from_secs(240);

/// The CLIs (tests/connectors/install.sh) and the browser their OAuth logins open
/// (tests/browser/install.sh: Chromium and Playwright), both idempotent and quick when done.
fn ensure_installed() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        run_install("tests/connectors/install.sh");
        run_install("tests/browser/install.sh");
    });
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Cli {
    Claude,
    Codex,
}

impl Cli {
    fn script(self) -> &'static str {
        match self {
            Cli::Claude => "claude.sh",
            Cli::Codex => "codex.sh",
        }
    }
}

struct Run {
    lines: Vec<String>,
    work: PathBuf,
}

/// Kill a process group (the script, its clients and the stand-in model).
fn kill_group(pgid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .status();
}

/// Run `tests/connectors/<cli> mode` with `env`, off the async runtime (the gateway shares it),
/// bounded by RUN_TIMEOUT (the whole process group is killed then); its stdout lines. Panics with
/// the script's stderr when it fails.
async fn run(cli: Cli, mode: &str, env: Vec<(&str, String)>) -> Run {
    use std::os::unix::process::CommandExt;
    let n = RUN.fetch_add(1, Ordering::SeqCst);
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "connectors-{}-{:?}-{mode}-{n}",
        std::process::id(),
        cli
    ));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("work dir");
    let stdout = std::fs::File::create(work.join("stdout")).expect("stdout file");
    let stderr = std::fs::File::create(work.join("stderr")).expect("stderr file");
    let mut cmd = Command::new("bash");
    cmd.arg(repo().join("tests/connectors").join(cli.script()))
        .arg(mode)
        .env("CLIENTS_DIR", clients_dir())
        .env("CONNECTOR_WORK", &work)
        .envs(env)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0);
    let label = format!("{cli:?} {mode}");
    let status = tokio::task::spawn_blocking(move || {
        let mut child = cmd.spawn().expect("spawn the connector script");
        let deadline = Instant::now() + RUN_TIMEOUT;
        loop {
            if let Some(status) = child.try_wait().expect("wait") {
                return Some(status);
            }
            if Instant::now() > deadline {
                kill_group(child.id());
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    })
    .await
    .expect("join");
    let out = std::fs::read_to_string(work.join("stdout")).unwrap_or_default();
    let err = std::fs::read_to_string(work.join("stderr")).unwrap_or_default();
    match status {
        None => panic!("{label}: timed out after {RUN_TIMEOUT:?}\nstdout:\n{out}\nstderr:\n{err}"),
        Some(s) if !s.success() => panic!("{label}: {s}\nstdout:\n{out}\nstderr:\n{err}"),
        Some(_) => {}
    }
    Run {
        lines: out.lines().map(String::from).collect(),
        work,
    }
}

fn assert_lines(run: &Run, want: &[String], what: &str) {
    assert_eq!(
        run.lines,
        want,
        "{what} (work dir {}):\n{}",
        run.work.display(),
        run.lines.join("\n")
    );
}

/// How the model learnt of the tools: Claude Code (by default) names MCP tools in a system message
/// and the model loads them with ToolSearch; Codex offers them at once.
fn offered(cli: Cli, tools: &str) -> Vec<String> {
    match cli {
        Cli::Claude => vec![
            format!("deferred: {tools}"),
            format!("tools: {tools}"),
            format!("searched: {tools}"),
        ],
        Cli::Codex => vec![format!("tools: {tools}")],
    }
}

/// The session lines a read grant must give: the model was offered mcp_read and mcp_validate from
/// our server and nothing else, and called none.
fn read_session(cli: Cli) -> Vec<String> {
    [
        vec!["final: tools offered: mcp_read,mcp_validate".to_owned()],
        offered(cli, "mcp__copyq__mcp_read,mcp__copyq__mcp_validate"),
    ]
    .concat()
}

/// The session lines a write grant must give: all three tools, then the gateway's exact replies to
/// the add and the read-back, as fed back to the model.
fn write_session(cli: Cli, tab: &str, text: &str) -> Vec<String> {
    let mut lines = vec!["final: done".to_owned()];
    lines.extend(offered(
        cli,
        "mcp__copyq__mcp_read,mcp__copyq__mcp_validate,mcp__copyq__mcp_write",
    ));
    lines.extend([
        format!(
            "result: ok|mode:add|tab:{tab}|full_path:mcp/{tab}|index:0|text_len:{}|tags:0|note:False",
            text.chars().count()
        ),
        format!("result: mode:item|tab:{tab}|full_path:mcp/{tab}|index:0\\ntext:{text}\\ntags:[]"),
    ]);
    lines
}

/// The items of a CopyQ tab, straight from CopyQ.
fn copyq_items(tab: &str) -> Vec<String> {
    tab_texts(copyq(), tab)
}

fn session_env(role: &str, tab: &str, text: &str) -> Vec<(&'static str, String)> {
    vec![
        ("CONNECTOR_ROLE", role.into()),
        ("CONNECTOR_TAB", tab.into()),
        ("CONNECTOR_TEXT", text.into()),
    ]
}

async fn bearer(cli: Cli, tab: &str, text: &str) {
    ensure_installed();
    let _serial = SERIAL.lock().await;
    let gw = gateway(copyq()).await;
    let url = gw.url.clone();
    let health: Vec<String> = match cli {
        Cli::Claude => vec![
            format!("add: Added HTTP MCP server copyq with URL: {url} to local config"),
            format!("list: copyq: {url} (HTTP) - ✔ Connected"),
            "get: Status: ✔ Connected".into(),
        ],
        Cli::Codex => vec![
            "add: Added global MCP server 'copyq'.".into(),
            format!("list: copyq {url} COPYQ_MCP_TOKEN enabled Bearer token"),
        ],
    };

    let mut env = session_env("read", tab, text);
    env.extend([
        ("CONNECTOR_URL", url.clone()),
        ("CONNECTOR_TOKEN", gw.read.clone()),
    ]);
    let got = run(cli, "bearer", env).await;
    assert_lines(
        &got,
        &[health.clone(), read_session(cli)].concat(),
        &format!("{cli:?}, read token"),
    );

    let mut env = session_env("write", tab, text);
    env.extend([
        ("CONNECTOR_URL", url.clone()),
        ("CONNECTOR_TOKEN", gw.write.clone()),
    ]);
    let got = run(cli, "bearer", env).await;
    assert_lines(
        &got,
        &[health, write_session(cli, tab, text)].concat(),
        &format!("{cli:?}, write token"),
    );
    assert_eq!(
        copyq_items(&format!("mcp/{tab}")),
        [text],
        "{cli:?}: the item is in CopyQ"
    );

    // A token the gateway refuses: the health check says so and the model is offered no tools.
    let mut env = session_env("write", tab, text);
    env.extend([
        ("CONNECTOR_URL", url.clone()),
        ("CONNECTOR_TOKEN", "not-a-token".into()),
    ]);
    let got = run(cli, "bearer", env).await;
    let refused: Vec<String> = match cli {
        Cli::Claude => vec![
            format!("add: Added HTTP MCP server copyq with URL: {url} to local config"),
            format!(
                "list: copyq: {url} (HTTP) - ✘ Failed to connect — Server rejected the configured \
                 Authorization header (HTTP 401). Check that the token is valid for this MCP \
                 endpoint — OAuth fallback is disabled when headers.Authorization is set. Error \
                 detail: Unauthorized"
            ),
            "get: Status: ✘ Failed to connect".into(),
            "final: ok".into(),
        ],
        Cli::Codex => vec![
            "add: Added global MCP server 'copyq'.".into(),
            format!("list: copyq {url} COPYQ_MCP_TOKEN enabled Bearer token"),
            "final: ok".into(),
        ],
    };
    assert_lines(&got, &refused, &format!("{cli:?}, a refused token"));
    assert_eq!(
        copyq_items(&format!("mcp/{tab}")),
        [text],
        "{cli:?}: nothing more was written"
    );
}

/// Claude Code with a bearer header: `claude mcp list` / `get` show it connected, and its own MCP
/// client calls the tools the stand-in model asks for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_bearer() {
    bearer(
        Cli::Claude,
        "workspace/claude-code-bearer",
        "Claude Code · bearer ✓",
    )
    .await;
}

/// Codex with `--bearer-token-env-var`: its own MCP client calls the tools the stand-in asks for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_bearer() {
    bearer(Cli::Codex, "workspace/codex-bearer", "Codex · bearer ✓").await;
}

/// A real image (Debian's logo, as a person copies an image file's content), the only format of the
/// item, as CopyQ stores a copied image.
const LOGO: &str = "/usr/share/pixmaps/debian-logo.png";

/// Claude Code's own resource tools (deferred behind ToolSearch, like MCP tools) list the gateway's
/// tabs as resources and read one; then mcp_read of an image item hands the model the image itself,
/// byte for byte (its sha256), beside the gateway's exact text reply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_reads_a_tab_resource_and_an_image_item() {
    ensure_installed();
    let _serial = SERIAL.lock().await;
    let logo = std::fs::read(LOGO).unwrap_or_else(|e| panic!("{LOGO}: {e}"));
    let (w, h) = (
        u32::from_be_bytes([logo[16], logo[17], logo[18], logo[19]]),
        u32::from_be_bytes([logo[20], logo[21], logo[22], logo[23]]),
    );
    let tab = "workspace/claude-code-media";
    copyq()
        .eval(
            &format!("tab('mcp/{tab}'); insert(0, {{'image/png': input()}})"),
            &logo,
        )
        .expect("seed the image");
    let gw = gateway(copyq()).await;
    let url = gw.url.clone();
    let uri = format!("copyq://tab/mcp/{tab}");
    let env = vec![
        ("CONNECTOR_URL", url.clone()),
        ("CONNECTOR_TOKEN", gw.read.clone()),
        ("CONNECTOR_ROLE", "read".into()),
        ("CONNECTOR_SCRIPT", "media".into()),
        ("CONNECTOR_TAB", tab.into()),
        ("CONNECTOR_URI", uri.clone()),
    ];
    let got = run(Cli::Claude, "bearer", env).await;
    let content = format!("content:image image/png {w}x{h} {}B", logo.len());
    let sha: String = {
        use sha2::Digest;
        sha2::Sha256::digest(&logo)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let listed = got
        .lines
        .iter()
        .find_map(|l| l.strip_prefix("listed: "))
        .unwrap_or_else(|| panic!("no listed: line in {:?}", got.lines));
    assert!(
        listed.split(',').any(|u| u == uri),
        "{uri} among the resources: {listed}"
    );
    let want: Vec<String> = vec![
        format!("add: Added HTTP MCP server copyq with URL: {url} to local config"),
        format!("list: copyq: {url} (HTTP) - ✔ Connected"),
        "get: Status: ✔ Connected".into(),
        "final: done".into(),
        "deferred: mcp__copyq__mcp_read,mcp__copyq__mcp_validate".into(),
        "tools: mcp__copyq__mcp_read".into(),
        "searched: mcp__copyq__mcp_read".into(),
        format!("listed: {listed}"),
        format!(
            "resource: mode:list|tab:{tab}|full_path:mcp/{tab}|total:1|showing:0-0\\n0|{content}|\"\"|[]"
        ),
        format!(
            "result: mode:item|tab:{tab}|full_path:mcp/{tab}|index:0\\n{content}\\nimage:sent image/png {w}x{h} {}B\\ntext:\\ntags:[][Image: source: PATH]",
            logo.len()
        ),
        format!("image: image/png {}B sha256={sha}", logo.len()),
    ];
    assert_lines(&got, &want, "Claude Code, resources and an image");
}

/// How the connector identifies itself to the gateway's OAuth server.
#[derive(Clone, Copy, Debug)]
enum Registration {
    /// Claude Code's default where the server supports client-ID metadata documents (this one
    /// does): `client_id` is the URL of its document. Here the URL is a stand-in document on
    /// loopback (MCP_OAUTH_CLIENT_METADATA_URL), shaped like the one Claude Code publishes.
    Document,
    /// A client registered beforehand (RFC 7591) and given to the CLI: `claude mcp add --client-id
    /// ID --callback-port PORT`.
    PreRegistered,
    /// The CLI registers itself (`codex mcp add --oauth-client-registration dcr`).
    Dynamic,
}

/// A gateway whose OAuth server has the owner's passphrase, short-lived access tokens, a data dir
/// of its own (its database is read below) and trust in `documents_ca` for metadata documents on
/// loopback.
async fn oauth_gateway(name: &str, documents_ca: Option<PathBuf>) -> Gateway {
    let data = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("connectors-gateway-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let dir = data.display().to_string();
    let gw = gateway_with(copyq(), move |s| {
        s.oauth.access_token_ttl = std::time::Duration::from_secs(ACCESS_TTL_SECS);
        s.data_dir = dir;
        if let Some(ca) = documents_ca {
            s.oauth.metadata_document_ca_file = ca.display().to_string();
            s.oauth.metadata_document_allow_private = true;
        }
    })
    .await;
    let store = copyq_mcp::store::Store::open(&gw.settings.data_dir()).expect("store");
    store
        .set_passphrase_hash(&copyq_mcp::oauth::passphrase::hash(PASSPHRASE).expect("hash"))
        .expect("passphrase");
    gw
}

/// Claude Code's client-ID metadata document as it publishes it at
/// https://claude.ai/oauth/claude-code-client-metadata (port-less loopback redirect URIs: the CLI
/// listens on a free port and relies on RFC 8252 7.3, loopback redirects match on any port), with
/// `client_id` its URL here.
fn claude_code_document(url: &str) -> serde_json::Value {
    serde_json::json!({
        "client_id": url,
        "client_name": "Claude Code",
        "client_uri": "https://claude.ai",
        "redirect_uris": ["http://localhost/callback", "http://127.0.0.1/callback"],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    })
}

/// An HTTPS server on loopback serving Claude Code's metadata document: (its URL, the certificate
/// the gateway must trust, the dir holding it).
async fn document_server() -> (String, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let generated = copyq_mcp::tls::generate(&["localhost".into()], dir.path()).expect("cert");
    let files = copyq_mcp::tls::TlsFiles {
        cert: generated.cert.clone(),
        key: generated.key.clone(),
    };
    let config = copyq_mcp::tls::load(&files).await.expect("tls config");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let url = format!("https://localhost:{port}/oauth/claude-code-client-metadata");
    let doc = claude_code_document(&url);
    let app = axum::Router::new().route(
        "/oauth/claude-code-client-metadata",
        axum::routing::get(move || {
            let doc = doc.clone();
            async move { axum::Json(doc) }
        }),
    );
    listener.set_nonblocking(true).expect("nonblocking");
    let server = axum_server::from_tcp_rustls(listener, config).expect("server");
    tokio::spawn(server.serve(app.into_make_service()));
    (url, generated.cert, dir)
}

/// Register a public client with the gateway (RFC 7591), for `redirect_uri`: its client_id.
async fn register(gw: &Gateway, name: &str, redirect_uri: &str) -> String {
    let res = reqwest::Client::new()
        .post(format!("{}/register", gw.base))
        .json(&serde_json::json!({
            "client_name": name,
            "redirect_uris": [redirect_uri],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
        }))
        .send()
        .await
        .expect("register");
    assert_eq!(res.status().as_u16(), 201, "registration");
    let v: serde_json::Value = res.json().await.expect("registration JSON");
    v["client_id"].as_str().expect("client_id").to_owned()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// What the gateway's database says about the OAuth grants of one role.
#[derive(Debug)]
struct GrantFacts {
    grants: i64,
    revoked: i64,
    refreshes: i64,
    /// Seconds from the first access token's expiry to the newest token's issue (> 0: a token was
    /// refreshed after the first one had expired).
    refreshed_after_expiry: i64,
}

fn grant_facts(gw: &Gateway, role: &str) -> GrantFacts {
    let db = gw.settings.data_dir().join("copyq-mcp.db");
    let conn =
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open the gateway's database");
    let one = |sql: &str| -> i64 {
        conn.query_row(sql, [role], |r| r.get::<_, Option<i64>>(0))
            .expect(sql)
            .unwrap_or(i64::MIN)
    };
    GrantFacts {
        grants: one("SELECT COUNT(*) FROM grants WHERE role = ?1"),
        revoked: one("SELECT COUNT(*) FROM grants WHERE role = ?1 AND revoked != 0"),
        refreshes: one(
            "SELECT COUNT(*) FROM refresh_tokens WHERE used != 0 AND grant_id IN \
             (SELECT grant_id FROM grants WHERE role = ?1)",
        ),
        refreshed_after_expiry: one(
            "SELECT MAX(created) - MIN(expires) FROM tokens WHERE grant_id IN \
             (SELECT grant_id FROM grants WHERE role = ?1)",
        ),
    }
}

/// Two OAuth logins of `cli`, each approved in headless Chromium: Read (the model is offered
/// mcp_read and mcp_validate only) and Write (the session starts after the first access token
/// expired: it adds to `tab` and reads it back), then the gateway's database: one live grant per
/// role, refresh tokens used, and a token issued after the first one expired.
async fn oauth(cli: Cli, registration: Registration, tab: &str, text: &str) {
    ensure_installed();
    let _serial = SERIAL.lock().await;
    let mut client_env: Vec<(&'static str, String)> = Vec::new();
    let mut _documents = None;
    let gw = match registration {
        Registration::Document => {
            let (url, ca, dir) = document_server().await;
            client_env.push(("MCP_OAUTH_CLIENT_METADATA_URL", url));
            _documents = Some(dir);
            oauth_gateway(&format!("{cli:?}-{registration:?}"), Some(ca)).await
        }
        Registration::PreRegistered => {
            let gw = oauth_gateway(&format!("{cli:?}-{registration:?}"), None).await;
            let port = free_port();
            let redirect = format!("http://localhost:{port}/callback");
            let id = register(&gw, "Claude Code (pre-registered)", &redirect).await;
            client_env.extend([
                ("CONNECTOR_CLIENT_ID", id),
                ("CONNECTOR_CALLBACK_PORT", port.to_string()),
            ]);
            gw
        }
        Registration::Dynamic => {
            client_env.push(("CONNECTOR_CODEX_REGISTRATION", "dcr".into()));
            oauth_gateway(&format!("{cli:?}-{registration:?}"), None).await
        }
    };
    let url = gw.url.clone();
    let login = |role: &str| -> Vec<String> {
        match cli {
            Cli::Claude => vec![
                format!("add: Added HTTP MCP server copyq with URL: {url} to local config"),
                format!("list: copyq: {url} (HTTP) - ! Needs authentication"),
                "login: Authenticated with \"copyq\". Its tools are now available in Claude Code."
                    .into(),
                format!("browser: ok role={role}"),
                format!("list: copyq: {url} (HTTP) - ✔ Connected"),
            ],
            Cli::Codex => vec![
                "add: Added global MCP server 'copyq'.".into(),
                "login: Successfully logged in.".into(),
                format!("browser: ok role={role}"),
                format!("list: copyq {url} - enabled OAuth"),
            ],
        }
    };
    let oauth_env = |role: &str, wait: u64| {
        let mut env = session_env(role, tab, text);
        env.extend([
            ("CONNECTOR_URL", url.clone()),
            ("CONNECTOR_WAIT", wait.to_string()),
            ("COPYQ_MCP_TEST_PASSPHRASE", PASSPHRASE.into()),
            (
                "COPYQ_MCP_BROWSER_TAG",
                format!("connectors-{cli:?}-{registration:?}-{role}"),
            ),
        ]);
        env.extend(client_env.iter().cloned());
        env
    };

    // Read, approved as Read in the browser: the model is offered mcp_read and mcp_validate only.
    let got = run(cli, "oauth", oauth_env("read", 0)).await;
    assert_lines(
        &got,
        &[login("read"), read_session(cli)].concat(),
        &format!("{cli:?}, OAuth read grant"),
    );

    // Write, approved as Write; the session starts after the first access token has expired.
    let got = run(cli, "oauth", oauth_env("write", ACCESS_TTL_SECS + 2)).await;
    assert_lines(
        &got,
        &[login("write"), write_session(cli, tab, text)].concat(),
        &format!("{cli:?}, OAuth write grant, after the first access token expired"),
    );
    assert_eq!(
        copyq_items(&format!("mcp/{tab}")),
        [text],
        "{cli:?}: the item is in CopyQ"
    );

    for role in ["read", "write"] {
        let facts = grant_facts(&gw, role);
        assert_eq!(
            (facts.grants, facts.revoked),
            (1, 0),
            "{cli:?} {role}: {facts:?}"
        );
        assert!(
            facts.refreshes >= 1,
            "{cli:?} {role}: no refresh token was used: {facts:?}"
        );
    }
    let facts = grant_facts(&gw, "write");
    assert!(
        facts.refreshed_after_expiry > 0,
        "{cli:?}: no access token was issued after the first one expired: {facts:?}"
    );
}

/// Claude Code through OAuth as it connects by default: `claude mcp login` under a terminal
/// identifying itself with its client-ID metadata document, the consent approved in headless
/// Chromium, the role chosen there is what its MCP client sees, and it refreshes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_oauth_metadata_document_and_refresh() {
    oauth(
        Cli::Claude,
        Registration::Document,
        "workspace/claude-code-cimd",
        "Claude Code · CIMD ✓",
    )
    .await;
}

/// Claude Code through OAuth with a client registered beforehand (`--client-id`,
/// `--callback-port`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_oauth_preregistered_and_refresh() {
    oauth(
        Cli::Claude,
        Registration::PreRegistered,
        "workspace/claude-code-oauth",
        "Claude Code · OAuth ✓",
    )
    .await;
}

/// Codex through OAuth: `codex mcp add` detects it and logs in (under a terminal), registering
/// itself (`--oauth-client-registration dcr`: its default here would be its metadata document at
/// https://chatgpt.com/oauth/codex/client.json, which a machine without Internet cannot fetch and
/// Codex has no setting to move), the consent approved in headless Chromium, and it refreshes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_oauth_and_refresh() {
    oauth(
        Cli::Codex,
        Registration::Dynamic,
        "workspace/codex-oauth",
        "Codex · OAuth ✓",
    )
    .await;
}
