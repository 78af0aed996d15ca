//! Bearer tokens and roles at the HTTP edge, through raw HTTP and a real MCP client: every bad token
//! is the same bare 401, a read token never sees or runs `mcp_write`, and both session-less and
//! session clients are served.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::support::*;
use copyq_mcp::auth::{Role, TokenService, load_or_create_key};
use copyq_mcp::backend::{MemoryBackend, ReadRequest, TabSelector};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rmcp::ServiceError;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

/// This suite's own private CopyQ, started on first use: for the tests that read what CopyQ
/// holds through the tools (here and in trust.rs). The rest run over no CopyQ.
pub(crate) fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

pub(crate) fn key(gw: &Gateway) -> Vec<u8> {
    load_or_create_key(&gw.settings.signing_key_path()).expect("gateway key")
}

pub(crate) fn sign(claims: Value, alg: Algorithm, key: &[u8]) -> String {
    jsonwebtoken::encode(
        &Header::new(alg),
        &claims,
        &EncodingKey::from_secret(key).expect("key"),
    )
    .expect("sign")
}

/// Claims of a token in epoch `ep` (the state database's, for a token that is otherwise valid).
pub(crate) fn claims(exp: Option<u64>, aud: &str, ep: &str) -> Value {
    let mut c = json!({"sub": "x", "role": "write", "iat": now(), "jti": "j1", "iss": "copyq-mcp", "aud": aud, "ep": ep});
    if let Some(exp) = exp {
        c["exp"] = exp.into();
    }
    c
}

fn super_claims(exp: Option<u64>, aud: &str, ep: &str) -> Value {
    claims(exp, aud, ep)
}

fn no_epoch(mut c: Value) -> Value {
    if let Some(m) = c.as_object_mut() {
        m.remove("ep");
    }
    c
}

pub(crate) const TOOLS_LIST: fn() -> Value =
    || json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});

#[tokio::test]
async fn every_bad_token_gets_the_same_bare_401() {
    let gw = edge_gateway().await;
    let k = key(&gw);
    let ep = copyq_mcp::store::Store::open(&gw.settings.data_dir())
        .expect("store")
        .epoch()
        .id;
    let claims = |exp, aud: &str| claims(exp, aud, &ep);
    let b64 = |v: Value| {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
    };
    let alg_none = format!(
        "{}.{}.",
        b64(json!({"alg": "none", "typ": "JWT"})),
        b64(claims(None, "copyq-mcp"))
    );
    let other_key = TokenService::new(
        b"another-key-another-key-another-key!",
        "copyq-mcp",
        "copyq-mcp",
    )
    .expect("svc")
    .issue("x", Role::Write, None)
    .expect("issue");
    let bad = [
        "garbage".to_owned(),
        "a.b.c".to_owned(),
        alg_none,
        other_key,
        sign(claims(Some(now() - 5), "copyq-mcp"), Algorithm::HS256, &k),
        sign(
            claims(None, "https://elsewhere.example/mcp"),
            Algorithm::HS256,
            &k,
        ),
        sign(claims(None, "copyq-mcp"), Algorithm::HS512, &k),
        // Of another state database (one that was lost), or of none, in a database made new.
        sign(
            super_claims(None, "copyq-mcp", "another-epoch"),
            Algorithm::HS256,
            &k,
        ),
        sign(no_epoch(claims(None, "copyq-mcp")), Algorithm::HS256, &k),
    ];
    let mut seen = Vec::new();
    for token in &bad {
        let (status, headers, body) = raw_post(&gw.url, Some(token), TOOLS_LIST()).await;
        assert_eq!(status, 401, "{token}");
        let challenge = headers
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        assert!(challenge.starts_with("Bearer"), "{challenge}");
        seen.push((challenge, body));
    }
    assert!(
        seen.windows(2).all(|w| w[0] == w[1]),
        "401s differ: {seen:?}"
    );
    assert_eq!(seen[0].1, "Unauthorized\n");
    let (status, headers, body) = raw_post(&gw.url, None, TOOLS_LIST()).await;
    assert_eq!(status, 401);
    assert!(headers.get("www-authenticate").is_some());
    assert_eq!(body, "Unauthorized\n");
    // A valid token with the same claims passes, so the refusals above are about the token alone.
    let (status, _, _) = raw_post(
        &gw.url,
        Some(&sign(claims(None, "copyq-mcp"), Algorithm::HS256, &k)),
        TOOLS_LIST(),
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn unknown_paths_are_404_and_health_needs_no_token() {
    let gw = edge_gateway().await;
    let res = reqwest::get(format!("{}/nothing-here", gw.base))
        .await
        .expect("http");
    assert_eq!(res.status().as_u16(), 404);
    let res = reqwest::get(format!("{}/healthz", gw.base))
        .await
        .expect("http");
    assert_eq!(res.status().as_u16(), 200);
    let body = res.json::<Value>().await.expect("json");
    assert_eq!(
        (&body["status"], &body["copyq"]),
        (&json!("ok"), &json!("up")),
        "{body}"
    );
}

fn names(tools: &[rmcp::model::Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

#[tokio::test]
async fn tools_are_filtered_by_role() {
    let held = vec![(
        "mcp/info".to_owned(),
        items(&["Секретное содержимое буфера"]),
    )];
    let gw = edge_gateway_over(MemoryBackend::with_tabs(held), |_| {}).await;
    let read = client(&gw.url, &gw.read).await;
    let write = client(&gw.url, &gw.write).await;
    let read_tools = read.list_all_tools().await.expect("list");
    let write_tools = write.list_all_tools().await.expect("list");
    assert_eq!(names(&read_tools), ["mcp_read", "mcp_validate"]);
    assert_eq!(
        names(&write_tools),
        ["mcp_read", "mcp_write", "mcp_validate"]
    );
    let listed = serde_json::to_string(&write_tools).expect("json");
    assert!(
        !listed.contains("Секретное"),
        "clipboard content leaked into tools/list"
    );
    for t in &write_tools {
        let a = t.annotations.clone().expect("annotations");
        assert!(t.title.is_some() && a.title.is_some(), "{}", t.name);
        assert_eq!(a.open_world_hint, Some(false), "{}", t.name);
        let writes = t.name == "mcp_write";
        assert_eq!(a.read_only_hint, Some(!writes), "{}", t.name);
        assert_eq!(a.destructive_hint, Some(writes), "{}", t.name);
    }
}

async fn call_error(c: &Client, name: &str) -> (i32, String) {
    let req = CallToolRequestParams::new(name.to_owned()).with_arguments(
        json!({"mode": "add", "tab": "workspace/forbidden-add", "text": "x"})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    );
    match c.call_tool(req).await {
        Err(ServiceError::McpError(e)) => (e.code.0, e.message.to_string()),
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

#[tokio::test]
async fn read_token_cannot_call_write_by_name() {
    let memory = MemoryBackend::default();
    let gw = edge_gateway_over(memory.clone(), |_| {}).await;
    let read = client(&gw.url, &gw.read).await;
    let forbidden = call_error(&read, "mcp_write").await;
    let unknown = call_error(&read, "no_such_tool").await;
    assert_eq!(forbidden, unknown);
    assert_eq!(forbidden.0, -32602);
    // The same through raw JSON-RPC: byte-identical error objects.
    let body = |name: &str| json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": {"mode": "tab_create", "path": "workspace/forbidden-create"}}});
    let (_, _, a) = raw_post(&gw.url, Some(&gw.read), body("mcp_write")).await;
    let (_, _, b) = raw_post(&gw.url, Some(&gw.read), body("nope")).await;
    assert_eq!(a, b);
    let tabs = memory
        .read(&ReadRequest {
            tabs: TabSelector::All {},
            skip: 0,
            limit: Some(0),
            preview: None,
        })
        .expect("the tab list")
        .all_tabs;
    assert!(!tabs.iter().any(|t| t.contains("forbidden")), "{tabs:?}");
}

#[tokio::test]
async fn clients_without_sessions_are_served() {
    let gw = edge_gateway().await;
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "mcp_read", "arguments": {"mode": "tree", "max_items": 0}}});
    let (status, headers, body) = raw_post(&gw.url, Some(&gw.read), call).await;
    assert_eq!(status, 200);
    assert!(headers.get("mcp-session-id").is_none());
    assert_eq!(
        headers.get("content-type").and_then(|v| v.to_str().ok()),
        Some("application/json")
    );
    let v: Value = serde_json::from_str(&body).expect("json body");
    assert_eq!(v["result"]["isError"], json!(false));
}

#[tokio::test]
async fn every_protocol_version_initializes() {
    let gw = edge_gateway().await;
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        let (status, _, body) = raw_post(&gw.url, Some(&gw.read), init).await;
        assert_eq!(status, 200, "{version}: {body}");
        let v: Value = serde_json::from_str(&body).expect("json");
        assert_eq!(v["result"]["protocolVersion"], json!(version));
        assert_eq!(v["result"]["serverInfo"]["name"], json!("copyq-mcp"));
    }
}

#[tokio::test]
async fn session_mode_serves_session_clients() {
    copyq()
        .seed("mcp/workspace/sessions", &items(&["in a session"]))
        .expect("seed");
    let gw = gateway_with(copyq(), |s| s.server.sessions = true).await;
    let c = client(&gw.url, &gw.write).await;
    assert_eq!(
        names(&c.list_all_tools().await.expect("list")),
        ["mcp_read", "mcp_write", "mcp_validate"]
    );
    let text = ok(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "workspace/sessions"}),
    )
    .await;
    assert_eq!(
        text,
        "mode:list|tab:workspace/sessions|full_path:mcp/workspace/sessions|total:1|showing:0-0\n0|\"in a session\"|[]"
    );
}

async fn with_host(url: &str, token: &str, host: &str) -> u16 {
    reqwest::Client::new()
        .post(url)
        .header("host", host)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(TOOLS_LIST().to_string())
        .send()
        .await
        .expect("http")
        .status()
        .as_u16()
}

#[tokio::test]
async fn host_allowlist_follows_config() {
    let gw = edge_gateway().await;
    assert_eq!(with_host(&gw.url, &gw.read, "localhost").await, 200);
    assert_eq!(with_host(&gw.url, &gw.read, "desk.lan:8765").await, 403);
    let gw = edge_gateway_with(|s| {
        s.server.allowed_hosts = vec!["desk.lan".into(), "192.168.1.20".into()]
    })
    .await;
    assert_eq!(with_host(&gw.url, &gw.read, "desk.lan:8765").await, 200);
    assert_eq!(with_host(&gw.url, &gw.read, "192.168.1.20").await, 200);
    assert_eq!(with_host(&gw.url, &gw.read, "127.0.0.1").await, 200);
    assert_eq!(with_host(&gw.url, &gw.read, "evil.example").await, 403);
}

/// POST one JSON-RPC message to /mcp in a session: (status, session id in the answer).
pub(crate) async fn in_session(
    url: &str,
    token: &str,
    session: Option<&str>,
    body: Value,
) -> (u16, Option<String>) {
    let mut req = reqwest::Client::new()
        .post(url)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .body(body.to_string());
    if let Some(id) = session {
        req = req.header("mcp-session-id", id);
    }
    let res = req.send().await.expect("http");
    let id = res
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    (res.status().as_u16(), id)
}

/// A session opened with `token` (initialize, then initialized): its id.
pub(crate) async fn open_session(url: &str, token: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let (status, id) = in_session(url, token, None, init).await;
    assert_eq!(status, 200);
    let id = id.expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(in_session(url, token, Some(&id), initialized).await.0, 202);
    id
}

#[tokio::test]
async fn a_session_belongs_to_the_token_that_opened_it() {
    let gw = edge_gateway_with(|s| s.server.sessions = true).await;
    let id = open_session(&gw.url, &gw.write).await;
    // Another token naming that session: 404, as for a session that does not exist.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    assert_eq!(
        in_session(&gw.url, &gw.read, Some(&id), list.clone())
            .await
            .0,
        404
    );
    let delete = |token: String| {
        let (url, id) = (gw.url.clone(), id.clone());
        async move {
            reqwest::Client::new()
                .delete(url)
                .header("authorization", format!("Bearer {token}"))
                .header("mcp-session-id", id)
                .send()
                .await
                .expect("http")
                .status()
                .as_u16()
        }
    };
    assert_eq!(
        delete(gw.read.clone()).await,
        404,
        "nor can it end the session"
    );
    assert_eq!(
        in_session(&gw.url, &gw.write, Some(&id), list).await.0,
        200,
        "still the owner's"
    );
    assert_eq!(delete(gw.write.clone()).await, 202);
}
