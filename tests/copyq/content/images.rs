//! `mcp_read item` sends an item's image as MCP image content beside its text, on both backends:
//! as CopyQ holds it when within `[images]`, scaled down past `max_edge`, refused past
//! `max_bytes` (the reply names the cap), and kept home for external tabs when the owner says so.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use rmcp::model::CallToolRequestParams;
use serde_json::json;

use super::{media, png_size, seeded};
use crate::support::*;

/// The text and the images (MIME type, bytes) of an `item` read.
async fn item(
    c: &Client,
    tab: &str,
    index: usize,
    scope: &str,
) -> (String, Vec<(String, Vec<u8>)>) {
    let args = json!({"mode": "item", "tab": tab, "index": index, "scope": scope});
    let result = c
        .call_tool(
            CallToolRequestParams::new("mcp_read")
                .with_arguments(args.as_object().cloned().unwrap_or_default()),
        )
        .await
        .expect("tool call answers");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let text = result
        .content
        .iter()
        .filter_map(|b| b.as_text())
        .map(|t| t.text.clone());
    let images = result
        .content
        .iter()
        .filter_map(|b| b.as_image())
        .map(|i| (i.mime_type.clone(), B64.decode(&i.data).expect("base64")))
        .collect();
    (text.collect::<Vec<_>>().join(""), images)
}

async fn session(
    backend: &str,
    tweak: impl FnOnce(&mut copyq_mcp::config::Settings),
) -> (Gateway, Client) {
    let backend = copyq_mcp::config::BackendKind::parse(backend).expect("socket or cli");
    let gw = gateway_with(seeded(), |s| {
        s.copyq.backend = backend;
        tweak(s);
    })
    .await;
    let c = client(&gw.url, &gw.read).await;
    (gw, c)
}

const HEAD: &str = "mode:item|tab:workspace/media|full_path:mcp/workspace/media";

#[tokio::test]
async fn a_screenshot_reaches_the_client_as_it_is() {
    let shot = &media()[0].formats[0].1;
    let (w, h) = png_size(shot);
    for backend in ["socket", "cli"] {
        let (_gw, c) = session(backend, |_| {}).await;
        let (text, images) = item(&c, "workspace/media", 0, "mcp").await;
        let n = shot.len();
        assert_eq!(
            text,
            format!(
                "{HEAD}|index:0\ncontent:image image/png {w}x{h} {n}B\n\
                 image:sent image/png {w}x{h} {n}B\ntext:\ntags:[]"
            ),
            "{backend}"
        );
        assert_eq!(
            images,
            vec![("image/png".to_owned(), shot.clone())],
            "{backend}"
        );
        // A JPEG goes as it is too; an SVG is described, not sent.
        let (text, images) = item(&c, "workspace/media", 2, "mcp").await;
        assert!(text.contains("\nimage:sent image/jpeg 493x58 "), "{text}");
        assert_eq!(
            images,
            vec![("image/jpeg".to_owned(), media()[2].formats[0].1.clone())]
        );
        let (text, images) = item(&c, "workspace/media", 6, "mcp").await;
        assert!(
            text.contains("\nimage:not sent: image/svg+xml is not an image format models take\n"),
            "{text}"
        );
        assert!(images.is_empty());
    }
}

#[tokio::test]
async fn large_images_are_scaled_to_max_edge() {
    let (w, h) = png_size(&media()[0].formats[0].1);
    let (sw, sh) = (256, (h * 256 + w / 2) / w);
    for backend in ["socket", "cli"] {
        let (_gw, c) = session(backend, |s| s.images.max_edge = 256).await;
        let (text, images) = item(&c, "workspace/media", 0, "mcp").await;
        assert_eq!(images.len(), 1, "{backend}");
        let (mime, png) = &images[0];
        assert_eq!((mime.as_str(), png_size(png)), ("image/png", (sw, sh)));
        let line = format!(
            "image:sent image/png {sw}x{sh} {}B scaled from {w}x{h}",
            png.len()
        );
        assert!(text.contains(&format!("\n{line}\n")), "{text}");
    }
}

#[tokio::test]
async fn the_byte_cap_refuses_and_names_itself() {
    for backend in ["socket", "cli"] {
        let (_gw, c) = session(backend, |s| s.images.max_bytes = 1024).await;
        let (text, images) = item(&c, "workspace/media", 1, "mcp").await;
        assert!(images.is_empty(), "{backend}");
        let line = text
            .lines()
            .find(|l| l.starts_with("image:"))
            .unwrap_or_default();
        assert!(line.starts_with("image:not sent: "), "{text}");
        assert!(
            line.ends_with(" at 48x48, over images.max_bytes (1024)"),
            "{text}"
        );
        assert!(text.ends_with("\ntext:Debian logo\ntags:[]"), "{text}");
    }
}

#[tokio::test]
async fn external_images_stay_home_when_the_owner_says_so() {
    for backend in ["socket", "cli"] {
        let (_gw, c) = session(backend, |s| s.privacy.external_images = false).await;
        let (text, images) = item(&c, "screens", 0, "external").await;
        assert!(images.is_empty(), "{backend}");
        assert!(
            text.contains(
                "\nimage:not sent: images of tabs outside mcp/ stay on this machine (privacy.external_images)\n"
            ),
            "{text}"
        );
        let (_gw, c) = session(backend, |_| {}).await;
        let (_, images) = item(&c, "screens", 0, "external").await;
        assert_eq!(images.len(), 1, "{backend}: sent by default");
    }
}

/// The Python MCP SDK (1.x and 2.x, tests/clients/py_client.py) receives the screenshot as image
/// content, byte for byte.
#[tokio::test]
async fn the_python_sdk_receives_the_image() {
    let shot = &media()[0].formats[0].1;
    let (gw, _) = session("socket", |_| {}).await;
    for venv in ["py1", "py2"] {
        let python = clients_dir().join(venv).join("bin/python");
        let args = json!({"mode": "item", "tab": "workspace/media", "index": 0}).to_string();
        let out = tokio::process::Command::new(&python)
            .arg(repo().join("tests/clients/py_client.py"))
            .args([
                "--url", &gw.url, "--token", &gw.read, "call", "mcp_read", &args,
            ])
            .output()
            .await
            .unwrap_or_else(|e| {
                panic!("{}: {e} (bash tests/clients/install.sh)", python.display())
            });
        let reply: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{venv}: {e}: {out:?}"));
        assert_eq!(reply["isError"], false, "{venv}: {reply}");
        assert_eq!(
            reply["images"][0]["mimeType"], "image/png",
            "{venv}: {reply}"
        );
        let data = reply["images"][0]["data"].as_str().unwrap_or_default();
        assert_eq!(B64.decode(data).ok().as_ref(), Some(shot), "{venv}");
    }
}

/// Whether a file CopyQ keeps item data in (`.../items/...`) holds exactly `bytes`.
fn in_a_data_file(dir: &std::path::Path, bytes: &[u8]) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let path = e.path();
        if path.is_dir() {
            return in_a_data_file(&path, bytes);
        }
        path.components().any(|c| c.as_os_str() == "items")
            && std::fs::read(&path).is_ok_and(|b| b == bytes)
    })
}

/// Issue 21, item 7: on CopyQ 8.0+ (tests/run.sh runs this suite in the 9.0, 10.0 and 17.0
/// chroots) a screenshot saved and loaded again is a `DataFile`, which the socket sends as a path:
/// `item` reads it back through CopyQ byte for byte, on both backends. On 6.4 the same test reads
/// the bytes CopyQ holds in memory.
#[tokio::test]
async fn a_screenshot_kept_in_a_data_file_is_read_back_whole() {
    let shot = &media()[0].formats[0].1;
    let tab = "mcp/workspace/shot-in-a-file";
    let c = seeded();
    super::seed(c, tab, &media()[..1]);
    c.eval(&format!("unload('{tab}')"), b"").expect("unload");
    let version = c.eval("print(version())", b"").expect("version()");
    let major: u32 = version
        .split_whitespace()
        .filter_map(|w| w.trim_start_matches('v').split('.').next()?.parse().ok())
        .next()
        .unwrap_or_else(|| panic!("no version in {version:?}"));
    assert_eq!(
        in_a_data_file(c.dir(), shot),
        major >= 8,
        "CopyQ {major}: kept in a file from 8.0 on"
    );
    for backend in ["socket", "cli"] {
        let (_gw, client) = session(backend, |_| {}).await;
        let (_, images) = item(&client, "workspace/shot-in-a-file", 0, "mcp").await;
        assert_eq!(
            images,
            vec![("image/png".to_owned(), shot.clone())],
            "{backend} on CopyQ {major}"
        );
    }
}

/// Reads go beside writes over the socket (bench/results.md, "Issue 22 item 5, stop 51"). An item
/// kept in files (CopyQ 8.0+, over `item_data_threshold`, 1 KiB by default) is read in two round
/// trips: its row, then each file's content by row number. A write in between moves the rows, and
/// the second fetched the next item's text under the first's tags. Here a writer adds and
/// deletes at the top while a reader reads the rows below it: every item read is one item. (On
/// 6.4, with no files, the same reads are checked all the same.)
#[tokio::test]
async fn an_item_kept_in_files_is_read_whole_while_writes_move_its_row() {
    let tab = "workspace/files-beside-writes";
    let big = |k: usize| format!("big {k} {}", "x".repeat(2000));
    let items: Vec<super::Seeded> = (0..8)
        .map(|k| super::Seeded {
            formats: vec![
                ("text/plain", big(k).into_bytes()),
                ("application/x-copyq-tags", format!("k{k}").into_bytes()),
            ],
        })
        .collect();
    let c = seeded();
    super::seed(c, &format!("mcp/{tab}"), &items);
    c.eval(&format!("unload('mcp/{tab}')"), b"")
        .expect("unload");
    let gw = gateway_with(c, |s| {
        s.limits.requests_per_minute = 1_000_000;
        s.limits.burst = 100_000;
    })
    .await;
    let (writer, reader) = (
        client(&gw.url, &gw.write).await,
        client(&gw.url, &gw.read).await,
    );
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writes = tokio::spawn({
        let done = done.clone();
        async move {
            let mut n = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let add = json!({"mode": "add", "tab": tab, "text": format!("small {n}")});
                let (is_error, text) = call(&writer, "mcp_write", add).await;
                assert!(!is_error, "{text}");
                let delete = json!({"mode": "delete", "tab": tab, "index": 0});
                let (is_error, text) = call(&writer, "mcp_write", delete).await;
                assert!(!is_error, "{text}");
                n += 1;
            }
            n
        }
    });
    let mut mixed = Vec::new();
    for i in 0..150 {
        let args = json!({"mode": "list", "tab": tab, "skip": 1 + i % 4, "max_items": 3, "include_tags": true});
        let (is_error, text) = call(&reader, "mcp_read", args).await;
        assert!(!is_error, "{text}");
        for line in text.lines().skip(1) {
            // `index|"big K xxx…"|[kK]` (a small item has no tags).
            let Some(k) = line
                .split("\"big ")
                .nth(1)
                .and_then(|r| r.split(' ').next())
            else {
                continue;
            };
            if !line.ends_with(&format!("[k{k}]")) {
                mixed.push(line.to_owned());
            }
        }
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let pairs = writes.await.expect("writer");
    assert!(pairs > 0, "the writer made no write while the reads ran");
    assert!(
        mixed.is_empty(),
        "items read mixed with another's text: {mixed:?}"
    );
}
