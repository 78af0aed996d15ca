//! `[mcp] structured = true` through the Python SDK 2.x, which checks each `structuredContent`
//! against the tool's `outputSchema` before it hands the result over: per mode of every tool,
//! the text reply stays exactly the reference's and the JSON holds the same fields. And the
//! schemas reach only clients whose protocol version defines them.

use crate::support::*;
use serde_json::{Value, json};

fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

/// `py_client.py ARGS` under the 2.x SDK: its JSON line.
async fn py2(url: &str, token: &str, args: Vec<String>) -> Value {
    let mut cmd = std::process::Command::new(clients_dir().join("py2/bin/python"));
    cmd.arg(repo().join("tests/clients/py_client.py"))
        .args(["--url", url, "--token", token])
        .args(args);
    // A structuredContent its outputSchema refuses fails the client.
    client_json(cmd, "the Python client").await
}

async fn call(gw: &Gateway, token: &str, tool: &str, args: Value) -> Value {
    let a = vec!["call".into(), tool.into(), args.to_string()];
    py2(&gw.url, token, a).await
}

/// Each case: tool, arguments, the exact text, the exact JSON.
fn cases() -> Vec<(&'static str, Value, &'static str, Value)> {
    vec![
        (
            "mcp_read",
            json!({"mode": "tree", "scope": "mcp", "max_depth": 3, "max_items": 2}),
            "workspace/st [2]\n0:|\"two lines | pipe\"|[a,b]|+note\n1:|\"plain\"|[]",
            json!({"mode": "tree", "tabs": [{"tab": "workspace/st", "external": false, "total": 2, "items": [
                {"index": 0, "text": "two lines | pipe", "tags": ["a", "b"], "has_note": true},
                {"index": 1, "text": "plain", "tags": []}]}]}),
        ),
        (
            "mcp_read",
            json!({"mode": "list", "tab": "workspace/st", "include_note": true, "skip": 0}),
            "mode:list|tab:workspace/st|full_path:mcp/workspace/st|total:2|showing:0-1\n0|\"two lines | pipe\"|[a,b]|note:a | note\n1|\"plain\"|[]",
            json!({"mode": "list", "tab": "workspace/st", "full_path": "mcp/workspace/st", "total": 2,
                "showing": "0-1", "items": [
                {"index": 0, "text": "two lines | pipe", "tags": ["a", "b"], "has_note": true, "note": "a | note"},
                {"index": 1, "text": "plain", "tags": []}]}),
        ),
        (
            "mcp_read",
            json!({"mode": "item", "tab": "workspace/st", "index": 0}),
            "mode:item|tab:workspace/st|full_path:mcp/workspace/st|index:0\ntext:two\nlines | pipe\ntags:[a,b]\n+note",
            json!({"mode": "item", "tab": "workspace/st", "full_path": "mcp/workspace/st", "index": 0,
                "text": "two\nlines | pipe", "tags": ["a", "b"], "has_note": true}),
        ),
        (
            "mcp_read",
            json!({"mode": "search", "query": "pipe|plain"}),
            "mode:search|query:pipe|plain|scope:mcp|results:2\nworkspace/st[0]|\"two lines | pipe\"|[a,b]|match:text\nworkspace/st[1]|\"plain\"|[]|match:text",
            json!({"mode": "search", "query": "pipe|plain", "scope": "mcp", "results": 2, "items": [
                {"tab": "workspace/st", "index": 0, "text": "two lines | pipe", "tags": ["a", "b"], "match": ["text"], "external": false},
                {"tab": "workspace/st", "index": 1, "text": "plain", "tags": [], "match": ["text"], "external": false}]}),
        ),
        (
            "mcp_validate",
            json!({"tool": "read", "params": {"mode": "tree", "max_items": 100}}),
            "valid:true|warnings:1\nwarning|LARGE_RESPONSE|max_items=100 may return large response\nestimated_tokens:16",
            json!({"valid": true, "warnings": 1, "estimated_tokens": 16, "problems": [
                {"kind": "warning", "code": "LARGE_RESPONSE", "message": "max_items=100 may return large response"}]}),
        ),
        (
            "mcp_validate",
            json!({"tool": "read", "params": {"mode": "list", "tab": "nope"}}),
            "valid:false|errors:1\nerror|TAB_NOT_FOUND|Tab not found: nope",
            json!({"valid": false, "errors": 1, "problems": [
                {"kind": "error", "code": "TAB_NOT_FOUND", "message": "Tab not found: nope"}]}),
        ),
        (
            "mcp_write",
            json!({"mode": "add", "tab": "workspace/st", "text": "new | one", "intent": "preview"}),
            "preview|mode:add\ntab:workspace/st\nwill_add:\ntext:\"new | one\"\ntags:[]",
            json!({"result": "preview", "mode": "add", "lines": [{"tab": "workspace/st"}, {"will_add": ""},
                {"text": "new | one"}, {"tags": "[]"}]}),
        ),
        (
            "mcp_write",
            json!({"mode": "add", "tab": "workspace/st", "text": "new | one", "tags": ["x"]}),
            "ok|mode:add|tab:workspace/st|full_path:mcp/workspace/st|index:0|text_len:9|tags:1|note:False",
            json!({"result": "ok", "mode": "add", "tab": "workspace/st", "full_path": "mcp/workspace/st",
                "index": 0, "text_len": 9, "tags": 1, "note": false}),
        ),
        (
            "mcp_write",
            json!({"mode": "update", "tab": "workspace/st", "index": 0, "field": "text", "text": "changed"}),
            "ok|mode:update|tab:workspace/st|full_path:mcp/workspace/st|index:0|field:text",
            json!({"result": "ok", "mode": "update", "tab": "workspace/st", "full_path": "mcp/workspace/st",
                "index": 0, "field": "text"}),
        ),
        (
            "mcp_write",
            json!({"mode": "tab_create", "path": "workspace/st2"}),
            "ok|mode:tab_create|path:workspace/st2|full_path:mcp/workspace/st2|status:created",
            json!({"result": "ok", "mode": "tab_create", "status": "created", "path": "workspace/st2", "full_path": "mcp/workspace/st2"}),
        ),
        (
            "mcp_write",
            json!({"mode": "move", "tab": "workspace/st", "index": 0, "to_tab": "workspace/st2"}),
            "ok|mode:move|from:mcp/workspace/st|to:mcp/workspace/st2|new_index:0",
            json!({"result": "ok", "mode": "move", "from": "mcp/workspace/st", "to": "mcp/workspace/st2", "new_index": 0}),
        ),
        (
            "mcp_write",
            json!({"mode": "delete", "tab": "workspace/st", "index": 1}),
            "ok|mode:delete|tab:workspace/st|full_path:mcp/workspace/st|index:1",
            json!({"result": "ok", "mode": "delete", "tab": "workspace/st", "full_path": "mcp/workspace/st", "index": 1}),
        ),
        (
            "mcp_write",
            json!({"mode": "tab_delete", "path": "workspace/st2"}),
            "ok|mode:tab_delete|path:workspace/st2|full_path:mcp/workspace/st2|items_removed:1",
            json!({"result": "ok", "mode": "tab_delete", "path": "workspace/st2", "full_path": "mcp/workspace/st2", "items_removed": 1}),
        ),
        (
            "mcp_read",
            json!({"mode": "list", "tab": "nope"}),
            "error|TAB_NOT_FOUND|Tab not found: nope",
            json!({"error": {"code": "TAB_NOT_FOUND", "message": "Tab not found: nope"}}),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_results_say_what_the_text_says() {
    run_install("tests/clients/install.sh");
    let seeded = [
        Item::new("two\nlines | pipe", &["a", "b"], "a | note"),
        Item::new("plain", &[], ""),
    ];
    copyq().seed("mcp/workspace/st", &seeded).expect("seed");
    let gw = gateway_with(copyq(), |s| s.mcp.structured = true).await;
    let token = token_covering(&gw, Role::Write, &["mcp/workspace/st", "mcp/workspace/st2"]);
    let listing = py2(&gw.url, &token, vec!["list".into()]).await;
    for tool in listing["tools"].as_array().expect("tools") {
        assert_eq!(tool["outputSchema"]["type"], json!("object"), "{tool}");
    }
    let mut wrong = Vec::new();
    for (tool, args, text, structured) in cases() {
        let got = call(&gw, &token, tool, args.clone()).await;
        let is_error = text.starts_with("error|");
        let want = json!({"isError": is_error, "text": text, "structured": structured});
        if got != want {
            wrong.push(format!("{tool} {args}\n  got:  {got}\n  want: {want}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// One session-less POST naming `version` in `MCP-Protocol-Version` (none: no header).
async fn post(gw: &Gateway, version: Option<&str>, body: Value) -> Value {
    let mut req = reqwest::Client::new()
        .post(&gw.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {}", gw.read))
        .body(body.to_string());
    if let Some(v) = version {
        req = req.header("mcp-protocol-version", v);
    }
    let res = req.send().await.expect("HTTP answers");
    serde_json::from_str(&res.text().await.expect("body")).expect("JSON")
}

#[tokio::test]
async fn only_versions_that_define_them_get_schemas() {
    let gw = gateway_with(copyq(), |s| s.mcp.structured = true).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "mcp_read", "arguments": {"mode": "tree", "max_items": 0}}});
    for (version, defined) in [
        (None, false),
        (Some("2024-11-05"), false),
        (Some("2025-03-26"), false),
        (Some("2025-06-18"), true),
        (Some("2025-11-25"), true),
    ] {
        let tools = post(&gw, version, list.clone()).await;
        let schema = &tools["result"]["tools"][0]["outputSchema"];
        assert_eq!(schema.is_object(), defined, "{version:?}: {tools}");
        let reply = post(&gw, version, call.clone()).await;
        let json = &reply["result"]["structuredContent"];
        assert_eq!(
            json["mode"] == json!("tree"),
            defined,
            "{version:?}: {reply}"
        );
    }
}
