//! `[mcp] chatgpt_tools`: `search` and `fetch` through the OpenAI Agents SDK's MCP client, their
//! JSON checked against the shapes OpenAI documents, over the tabs the token covers, masked as
//! `mcp_read` masks, and ids that still find their item after other items shifted it.

use crate::support::*;
use serde_json::{Value, json};

fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

/// `agents_client.py ARGS`: its JSON line (a shape OpenAI's schema refuses fails in the client).
async fn agents(url: &str, token: &str, args: &[&str]) -> Value {
    let mut cmd = std::process::Command::new(clients_dir().join("agents/bin/python"));
    cmd.arg(repo().join("tests/clients/agents_client.py"))
        .args(["--url", url, "--token", token])
        .args(args);
    client_json(cmd, "the Agents SDK client").await
}

/// The result whose url is `url`, from a search reply.
fn by_url<'a>(found: &'a Value, url: &str) -> &'a Value {
    found["json"]["results"]
        .as_array()
        .and_then(|r| r.iter().find(|x| x["url"] == json!(url)))
        .unwrap_or_else(|| panic!("no result at {url}: {found}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_and_fetch_for_chatgpt() {
    run_install("tests/clients/install.sh");
    let c = copyq();
    let gpt = [
        Item::new("alpha one", &["t"], "a note"),
        Item::new("beta two", &[], ""),
    ];
    c.seed("mcp/workspace/gpt", &gpt).expect("seed");
    c.seed(
        "ext gpt",
        &[Item::new("alpha aws AKIAZ3MHQ7XWPLBV4KTN", &[], "")],
    )
    .expect("seed");
    c.seed(
        "mcp/workspace/hidden",
        &[Item::new("alpha hidden", &[], "")],
    )
    .expect("seed");
    let gw = gateway_with(c, |s| s.mcp.chatgpt_tools = true).await;
    let read = token_covering(&gw, Role::Read, &["mcp/workspace/gpt", "ext gpt"]);

    let listing = agents(&gw.url, &gw.write, &["list"]).await;
    assert_eq!(
        listing["tools"],
        json!(["mcp_read", "mcp_write", "mcp_validate", "search", "fetch"])
    );
    // The SDK turns both into strict function tools, as OpenAI's models call them.
    let strict = listing["strict"].as_array().cloned().unwrap_or_default();
    assert!(
        strict.contains(&json!("search")) && strict.contains(&json!("fetch")),
        "{listing}"
    );
    let listing = agents(&gw.url, &read, &["list"]).await;
    assert_eq!(
        listing["tools"],
        json!(["mcp_read", "mcp_validate", "search", "fetch"])
    );

    let found = agents(&gw.url, &read, &["search", "ALPHA"]).await;
    assert_eq!(found["blocks"], json!(1), "{found}");
    assert_eq!(
        found["json"]["results"].as_array().map(Vec::len),
        Some(2),
        "{found}"
    );
    let mine = by_url(&found, "copyq://tab/mcp/workspace/gpt?index=0");
    assert_eq!(mine["title"], json!("alpha one"));
    let ext = by_url(&found, "copyq://tab/ext%20gpt?index=0");
    assert_eq!(ext["title"], json!("alpha aws [redacted:aws-access-token]"));

    let id = mine["id"].as_str().expect("an id").to_owned();
    let want = |index: usize| {
        json!({"isError": false, "blocks": 1, "json": {"id": id, "title": "alpha one",
            "text": "alpha one", "url": format!("copyq://tab/mcp/workspace/gpt?index={index}"),
            "metadata": {"tab": "mcp/workspace/gpt", "index": index, "tags": ["t"], "note": "a note"}}})
    };
    assert_eq!(agents(&gw.url, &read, &["fetch", &id]).await, want(0));
    // Another item goes on top: the id still finds its item, now at index 1.
    let writer = client(&gw.url, &gw.write).await;
    ok(
        &writer,
        "mcp_write",
        json!({"mode": "add", "tab": "workspace/gpt", "text": "gamma"}),
    )
    .await;
    assert_eq!(agents(&gw.url, &read, &["fetch", &id]).await, want(1));

    let ext_id = ext["id"].as_str().expect("an id");
    let got = agents(&gw.url, &read, &["fetch", ext_id]).await;
    assert_eq!(
        got["json"]["text"],
        json!("alpha aws [redacted:aws-access-token]"),
        "{got}"
    );

    // A tab outside the token's coverage is refused exactly as mcp_read refuses it.
    let hidden = "copyq://tab/mcp/workspace/hidden?index=0#0011223344556677";
    let got = agents(&gw.url, &read, &["fetch", hidden]).await;
    let (_, refusal) = call(
        &client(&gw.url, &read).await,
        "mcp_read",
        json!({"mode": "list", "tab": "workspace/hidden", "max_items": 1}),
    )
    .await;
    assert_eq!(got, json!({"isError": true, "text": refusal}));
    // The changed item's id no longer finds it.
    ok(
        &writer,
        "mcp_write",
        json!({"mode": "update", "tab": "workspace/gpt", "index": 1,
        "field": "text", "text": "alpha changed"}),
    )
    .await;
    let got = agents(&gw.url, &read, &["fetch", &id]).await;
    assert_eq!(got["isError"], json!(true), "{got}");
}
