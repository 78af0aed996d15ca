//! What images cost (issue 21): `list` of 100 image items (which must not fetch their bytes on the
//! CLI, and reads CopyQ's rows whole on the socket of CopyQ < 8.0, which has no `DataFile`s), and
//! `item` of a 4K screenshot (fetched, decoded, scaled to 1568 px, encoded, sent as base64), both
//! backends side by side, against `item` of a text item. The screenshot is a real one: Chromium
//! headless at 3840x2160 of Node.js's API docs (nodejs-doc), taken when the bench starts.

use std::process::Command;

use copyq_mcp::sandbox::PrivateCopyq;
use serde_json::json;

use super::{Gateway, MapUnit, post, time, tool_call};

const TAB: &str = "mcp/workspace/images";
const PAGE: &str = "file:///usr/share/doc/nodejs/api/all.html";

fn screenshot(dir: &std::path::Path) -> Vec<u8> {
    let out = dir.join("shot4k.png");
    let status = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .args([
            "--window-size=3840,2160",
            &format!("--screenshot={}", out.display()),
            PAGE,
        ])
        .output()
        .expect("chromium (apt-get install chromium)");
    assert!(
        out.exists(),
        "no screenshot: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    std::fs::read(out).expect("screenshot")
}

fn seed(copyq: &PrivateCopyq, png: &[u8]) {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(png);
    let script = format!(
        "tab('{TAB}'); var png = fromBase64(str(input())); \
         for (var i = 0; i < 100; ++i) add({{'image/png': png}}); unload()"
    );
    copyq
        .eval(&script, b64.as_bytes())
        .expect("seed the images tab");
}

/// The images tab, seeded with 100 screenshots; the PNG's size.
pub fn seed_screenshots(copyq: &PrivateCopyq) -> usize {
    let dir = tempfile::tempdir().expect("tempdir");
    let png = screenshot(dir.path());
    seed(copyq, &png);
    png.len()
}

/// The images tab removed, so that the tables after this one (the mixed load's searches read
/// every `mcp/` tab) measure what they measured before it was added, unless they seed it again.
pub fn remove_screenshots(copyq: &PrivateCopyq) {
    copyq
        .eval(&format!("removeTab('{TAB}')"), b"")
        .expect("remove the images tab");
}

pub async fn table(copyq: &PrivateCopyq, http: &reqwest::Client) -> Vec<String> {
    let png_len = seed_screenshots(copyq);
    let mut rows = vec![
        format!(
            "## Images: 100 items each a 3840x2160 screenshot ({png_len} bytes PNG), median / p99 ms"
        ),
        String::new(),
        "| operation | gateway, cli backend | gateway, socket backend |".to_owned(),
        "|---|---|---|".to_owned(),
    ];
    let cli = Gateway::start(copyq, "cli");
    let socket = Gateway::start(copyq, "socket");
    let ops = [
        (
            "list (100 image items)",
            json!({"mode": "list", "tab": "workspace/images", "max_items": 100}),
            10,
        ),
        (
            "item of the 4K screenshot (scaled to 1568 px)",
            json!({"mode": "item", "tab": "workspace/images", "index": 0}),
            10,
        ),
        (
            "item of a text item (for comparison)",
            json!({"mode": "item", "tab": "workspace/big", "index": 5000}),
            30,
        ),
    ];
    for (name, args, n) in ops {
        let body = tool_call(args);
        let c = time(n, || {
            post(http, &cli.url, Some(&cli.token), &body).map_unit()
        })
        .await;
        let s = time(n, || {
            post(http, &socket.url, Some(&socket.token), &body).map_unit()
        })
        .await;
        let row = format!(
            "| {name} | {:.2} / {:.2} | {:.2} / {:.2} |",
            c.0, c.1, s.0, s.1
        );
        println!("{row}");
        rows.push(row);
    }
    let reply = post(
        http,
        &socket.url,
        Some(&socket.token),
        &tool_call(json!({"mode": "item", "tab": "workspace/images", "index": 0})),
    )
    .await;
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let sent = reply["result"]["content"][1]["data"]
        .as_str()
        .map_or(0, str::len);
    rows.push(String::new());
    rows.push(format!(
        "The item reply: `{}`, then {sent} characters of base64.",
        text.replace('\n', "⏎")
    ));
    rows.push(String::new());
    remove_screenshots(copyq);
    rows
}
