//! The direct `tools/call` path against rmcp's own answer: every request of a corpus is sent to a
//! `/mcp` that is rmcp alone and to one with the direct path in front of rmcp, in the same order
//! (the writes change each side's own copy of the same tabs alike), and the two answers must be
//! the same bytes. A third `/mcp`, the direct path in front of a stand-in that answers 418, shows
//! which requests the direct path answered itself: without that, a path that answered nothing
//! would pass the comparison.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::{Next, from_fn, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use super::{Direct, tool_call};
use crate::auth::{Principal, Role};
use crate::backend::{Backend, Item, MemoryBackend};
use crate::clipboard::Roots;
use crate::config::{McpSettings, Settings};
use crate::mcp::{CopyqMcp, ToolState};

const ACCEPT: &str = "application/json, text/event-stream";

fn tools(structured: bool) -> Arc<ToolState> {
    let tabs = vec![
        (
            "mcp/info".to_owned(),
            vec![
                Item::new("first item\nsecond line", &["important"], "a note"),
                Item::new("password: hunter2-Correct-Horse", &[], ""),
            ],
        ),
        (
            "mcp/workspace".to_owned(),
            vec![Item::new("Проект Alpha", &["project"], "")],
        ),
        ("архив".to_owned(), vec![Item::new("old", &[], "")]),
    ];
    let mut state = ToolState::new(
        Backend::Memory(MemoryBackend::with_tabs(tabs)),
        Roots::default(),
    )
    .with_surface(McpSettings {
        structured,
        chatgpt_tools: true,
    });
    // Versions carry a per-process key: the same on every side, so that replies compare.
    state.version_key = [7; 32];
    Arc::new(state)
}

/// The caller the `x-role` header names (`read` or `write`), as the bearer check would leave it;
/// none without the header.
async fn principal(mut req: Request, next: Next) -> Response {
    let role = match req.headers().get("x-role").map(|v| v.as_bytes()) {
        Some(b"read") => Some(Role::Read),
        Some(b"write") => Some(Role::Write),
        _ => None,
    };
    if let Some(role) = role {
        req.extensions_mut().insert(Principal {
            subject: "test".into(),
            role,
            token_id: "j".into(),
            grant: None,
            tabs: Default::default(),
            expires: None,
        });
    }
    next.run(req).await
}

fn direct(tools: &Arc<ToolState>) -> Arc<Direct> {
    Arc::new(Direct {
        mcp: CopyqMcp::new(tools.clone()),
        max_body: 4096,
    })
}

/// rmcp alone, rmcp behind the direct path, and a stand-in behind it.
fn sides(structured: bool) -> [Router; 3] {
    let mut server = Settings::defaults().expect("defaults").server;
    server.max_body_bytes = 4096;
    let rmcp = |tools: &Arc<ToolState>| {
        super::super::mcp_service(tools, &server, None, CancellationToken::new())
    };
    let alone = tools(structured);
    let fronted = tools(structured);
    let stand_in = tools(structured);
    [
        Router::new().route_service("/mcp", rmcp(&alone)),
        Router::new()
            .route_service("/mcp", rmcp(&fronted))
            .route_layer(from_fn_with_state(direct(&fronted), tool_call)),
        Router::new()
            .route_service(
                "/mcp",
                tower::service_fn(|_: Request| async {
                    Ok::<_, Infallible>(StatusCode::IM_A_TEAPOT.into_response())
                }),
            )
            .route_layer(from_fn_with_state(direct(&stand_in), tool_call)),
    ]
    .map(|router| router.route_layer(from_fn(principal)))
}

/// One request of the corpus: its headers beyond the usual ones, and its body.
struct Case {
    role: Option<&'static str>,
    headers: Vec<(&'static str, &'static str)>,
    /// Replaces the usual `Accept`, `Content-Type` and `Content-Length` where named.
    body: String,
    length: bool,
    direct: bool,
}

fn call(role: Option<&'static str>, body: serde_json::Value) -> Case {
    Case {
        role,
        headers: Vec::new(),
        body: body.to_string(),
        length: true,
        direct: true,
    }
}

impl Case {
    fn header(mut self, name: &'static str, value: &'static str) -> Self {
        self.headers.push((name, value));
        self
    }
    fn for_rmcp(mut self) -> Self {
        self.direct = false;
        self
    }
    fn request(&self) -> Request {
        let mut builder = Request::post("http://localhost/mcp").header("host", "localhost");
        for (name, default) in [("accept", ACCEPT), ("content-type", "application/json")] {
            if !self.headers.iter().any(|(n, _)| *n == name) {
                builder = builder.header(name, default);
            }
        }
        for (name, value) in &self.headers {
            builder = builder.header(*name, *value);
        }
        if self.length {
            builder = builder.header("content-length", self.body.len());
        }
        if let Some(role) = self.role {
            builder = builder.header("x-role", role);
        }
        builder
            .body(Body::from(self.body.clone()))
            .expect("request")
    }
}

fn tool(id: serde_json::Value, name: &str, arguments: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}})
}

fn corpus() -> Vec<Case> {
    use serde_json::json;
    let read = Some("read");
    let write = Some("write");
    let list = json!({"mode": "list", "tab": "info"});
    vec![
        call(
            read,
            tool(
                json!(1),
                "mcp_read",
                json!({"mode": "tree", "scope": "all"}),
            ),
        ),
        call(read, tool(json!("a-1"), "mcp_read", list.clone())),
        call(read, tool(json!(2), "mcp_read", list.clone()))
            .header("mcp-protocol-version", "2025-06-18"),
        call(read, tool(json!(3), "mcp_read", list.clone()))
            .header("mcp-protocol-version", "2025-11-25"),
        call(read, tool(json!(4), "mcp_read", list.clone()))
            .header("mcp-protocol-version", "2024-11-05"),
        call(
            read,
            tool(
                json!(5),
                "mcp_read",
                json!({"mode": "item", "tab": "info", "index": 1}),
            ),
        )
        .header("mcp-protocol-version", "2025-06-18"),
        call(
            read,
            tool(
                json!(6),
                "mcp_read",
                json!({"mode": "search", "query": "item", "scope": "all"}),
            ),
        ),
        call(read, tool(json!(7), "mcp_read", json!({"mode": "bogus"})))
            .header("mcp-protocol-version", "2025-06-18"),
        call(
            read,
            tool(
                json!(8),
                "mcp_write",
                json!({"mode": "add", "tab": "info", "text": "x"}),
            ),
        ),
        call(None, tool(json!(9), "mcp_read", list.clone())),
        call(read, tool(json!(10), "no_such_tool", json!({}))),
        call(
            write,
            tool(
                json!(11),
                "mcp_write",
                json!({"mode": "add", "tab": "info", "text": "new"}),
            ),
        )
        .header("mcp-protocol-version", "2025-06-18"),
        call(
            write,
            tool(
                json!(12),
                "mcp_validate",
                json!({"tool": "mcp_write",
            "params": {"mode": "delete", "tab": "info", "index": 9}}),
            ),
        ),
        call(
            write,
            tool(
                json!(13),
                "mcp_write",
                json!({"mode": "delete", "tab": "info", "index": 9}),
            ),
        ),
        call(read, tool(json!(14), "mcp_read", list.clone())),
        call(read, tool(json!(15), "search", json!({"query": "Alpha"}))),
        call(read, tool(json!(16), "fetch", json!({"id": "nope"})))
            .header("mcp-protocol-version", "2025-06-18"),
        call(
            read,
            json!({"jsonrpc": "2.0", "id": 17, "method": "tools/call",
            "params": {"name": "mcp_read"}}),
        ),
        call(
            read,
            json!({"jsonrpc": "2.0", "id": 18, "method": "tools/call",
            "params": {"name": "mcp_read", "arguments": list.clone(), "_meta": {"progressToken": 4}}}),
        ),
        // Each of these goes to rmcp, which answers it as before.
        call(
            read,
            json!({"jsonrpc": "2.0", "id": 19, "method": "tools/call",
            "params": {"arguments": {}}}),
        )
        .for_rmcp(),
        call(
            read,
            json!({"jsonrpc": "2.0", "id": 20, "method": "tools/call",
            "params": {"name": "mcp_read", "arguments": list.clone(),
                "_meta": {"io.modelcontextprotocol/protocolVersion": "2025-06-18"}}}),
        )
        .header("mcp-protocol-version", "2025-06-18")
        .for_rmcp(),
        call(read, tool(json!(21), "mcp_read", list.clone()))
            .header("mcp-protocol-version", "2026-07-28")
            .for_rmcp(),
        call(read, tool(json!(22), "mcp_read", list.clone()))
            .header("mcp-protocol-version", "1999-01-01")
            .for_rmcp(),
        call(read, tool(json!(23), "mcp_read", list.clone()))
            .header("mcp-protocol-version", "2025-06-18")
            .header("mcp-protocol-version", "2025-06-18")
            .for_rmcp(),
        call(read, tool(json!(24), "mcp_read", list.clone()))
            .header("accept", "application/json")
            .for_rmcp(),
        call(read, tool(json!(25), "mcp_read", list.clone()))
            .header("accept", "application/json, text/event-stream;q=0")
            .for_rmcp(),
        call(read, tool(json!(26), "mcp_read", list.clone()))
            .header("content-type", "text/plain")
            .for_rmcp(),
        Case {
            length: false,
            ..call(read, tool(json!(27), "mcp_read", list.clone())).for_rmcp()
        },
        call(
            read,
            tool(
                json!(28),
                "mcp_read",
                json!({"mode": "list", "tab": "info",
            "filler": "x".repeat(5000)}),
            ),
        )
        .for_rmcp(),
        call(
            read,
            json!({"jsonrpc": "2.0", "id": 29, "method": "tools/list"}),
        )
        .for_rmcp(),
        call(read, json!([tool(json!(30), "mcp_read", list.clone())])).for_rmcp(),
        call(
            read,
            json!({"jsonrpc": "2.0", "id": 31, "result": {"x": "tools/call"}}),
        )
        .for_rmcp(),
        call(read, json!({"jsonrpc": "2.0", "method": "tools/call"})).for_rmcp(),
        Case {
            body: "{\"jsonrpc\":\"2.0\",\"id\":32,\"method\":\"tools/call\"".into(),
            ..call(read, json!(null)).for_rmcp()
        },
        call(read, tool(json!(33), "mcp_read", list.clone()))
            .header("content-type", "application/json; charset=utf-8"),
    ]
}

async fn answer(router: &Router, case: &Case) -> (StatusCode, Option<String>, Vec<u8>) {
    let response = router
        .clone()
        .oneshot(case.request())
        .await
        .expect("infallible");
    let status = response.status();
    let kind = response
        .headers()
        .get("content-type")
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
        .to_vec();
    (status, kind, body)
}

async fn same_as_rmcp(structured: bool) {
    let [alone, fronted, stand_in] = sides(structured);
    for (n, case) in corpus().iter().enumerate() {
        let shown: String = case.body.chars().take(120).collect();
        let expected = answer(&alone, case).await;
        let got = answer(&fronted, case).await;
        assert_eq!(
            (got.0, &got.1, String::from_utf8_lossy(&got.2)),
            (
                expected.0,
                &expected.1,
                String::from_utf8_lossy(&expected.2)
            ),
            "case {n} ({shown}), structured {structured}"
        );
        let (status, _, _) = answer(&stand_in, case).await;
        assert_eq!(
            status == StatusCode::IM_A_TEAPOT,
            !case.direct,
            "case {n} ({shown}): answered {} by the direct path",
            if case.direct { "not" } else { "wrongly" }
        );
    }
}

#[tokio::test]
async fn answers_as_rmcp_does() {
    same_as_rmcp(false).await;
}

#[tokio::test]
async fn answers_as_rmcp_does_with_structured_results() {
    same_as_rmcp(true).await;
}

#[test]
fn a_list_reply_is_the_one_the_reference_fixes() {
    // The comparison above would pass if both sides were wrong alike: one answer, whole.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let [_, fronted, _] = sides(false);
    let case = call(
        Some("read"),
        tool(
            serde_json::json!(1),
            "mcp_read",
            serde_json::json!({"mode": "list", "tab": "workspace"}),
        ),
    );
    let (status, kind, body) = runtime.block_on(answer(&fronted, &case));
    assert_eq!(status, StatusCode::OK);
    assert_eq!(kind.as_deref(), Some("application/json"));
    assert_eq!(
        String::from_utf8_lossy(&body),
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\
         \"mode:list|tab:workspace|full_path:mcp/workspace|total:1|showing:0-0\\n\
         0|\\\"Проект Alpha\\\"|[project]\"}],\"isError\":false}}"
    );
}
