//! Writes stay text (issue 21, item 6): `update` and `move` of an item holding an image keep the
//! image, byte for byte, on both backends; the reply of a read after them still describes it.

use serde_json::json;

use super::{Seeded, copyq, media, seed, session};
use crate::support::*;

/// The PNG bytes row `row` of `tab` holds in CopyQ, read straight from CopyQ.
fn png_in(tab: &str, row: usize) -> Vec<u8> {
    bytes_in(tab, row, "image/png")
}

#[tokio::test]
async fn update_and_move_keep_the_image() {
    let logo = &media()[1];
    for backend in ["socket", "cli"] {
        let (from, to) = (
            format!("mcp/workspace/keep-{backend}"),
            format!("mcp/workspace/kept-{backend}"),
        );
        let item = Seeded {
            formats: logo.formats.clone(),
        };
        seed(copyq(), &from, &[item]);
        let (gw, _) = session(backend).await;
        let w = client(&gw.url, &gw.write).await;
        let shown = from.trim_start_matches("mcp/");
        ok(&w, "mcp_write", json!({"mode": "update", "tab": shown, "index": 0, "field": "text", "text": "Debian logo, renamed"})).await;
        ok(
            &w,
            "mcp_write",
            json!({"mode": "update", "tab": shown, "index": 0, "field": "tags", "tags": ["logo"]}),
        )
        .await;
        assert_eq!(png_in(&from, 0), logo.formats[1].1, "{backend}: update");
        let target = to.trim_start_matches("mcp/");
        ok(
            &w,
            "mcp_write",
            json!({"mode": "move", "tab": shown, "index": 0, "to_tab": target}),
        )
        .await;
        assert_eq!(png_in(&to, 0), logo.formats[1].1, "{backend}: move");
        let got = ok(&w, "mcp_read", json!({"mode": "list", "tab": target})).await;
        assert_eq!(
            got,
            format!(
                "mode:list|tab:{target}|full_path:{to}|total:1|showing:0-0\n\
                 0|content:image image/png 48x48 {}B|\"Debian logo, renamed\"|[logo]",
                logo.bytes("image/png")
            )
        );
    }
}

/// The formats row 0 of `tab` holds in CopyQ, sorted.
fn mimes_in(tab: &str) -> Vec<String> {
    let script = format!("tab('{tab}'); print(JSON.stringify(Object.keys(getItem(0)).sort()))");
    let out = copyq().eval(&script, b"").expect("read back");
    serde_json::from_str(out.trim()).expect("a JSON list")
}

/// A gateway on `backend` with a data dir of its own, `name` (gateways of this process that share
/// one, writing at once, can make SQLite fail ("disk I/O error"), each connection's locks undone by
/// another's open), and `audit.max_bytes` set to `cap` if given.
async fn own_gateway(backend: &str, name: &str, cap: Option<u64>) -> Gateway {
    let dir = copyq().dir().join(name);
    gateway_with(copyq(), |s| {
        s.copyq.backend = copyq_mcp::config::BackendKind::parse(backend).expect("a backend");
        s.data_dir = dir.display().to_string();
        if let Some(cap) = cap {
            s.audit.max_bytes = cap;
        }
    })
    .await
}

/// One `mcp_write` through `gw` with its write token; its `ok|` reply.
async fn write(gw: &Gateway, args: serde_json::Value) -> String {
    let w = client(&gw.url, &gw.write).await;
    ok(&w, "mcp_write", args).await
}

/// `copyq-mcp audit restore` of `gw`'s audit entry of `mode` on `tab`, through `backend`.
fn restore_entry(gw: &Gateway, backend: &str, mode: &str, tab: &str) {
    let store = copyq_mcp::store::Store::open(&gw.settings.data_dir()).expect("store");
    let entries = store.audit_since(0, 10_000).expect("audit");
    let entry = entries
        .iter()
        .find(|e| e.mode == mode && e.tab == tab)
        .unwrap_or_else(|| panic!("{backend}: no {mode} entry in {entries:?}"));
    restore(gw, backend, entry.id);
}

/// `copyq-mcp audit restore ID` on `gw`'s data dir, through `backend`.
fn restore(gw: &Gateway, backend: &str, id: i64) {
    let (ok, _, stderr) = owner_with(
        gw,
        &["audit", "restore", &id.to_string()],
        &[("COPYQ_MCP__COPYQ__BACKEND", backend)],
    );
    assert!(ok, "{stderr}");
}

/// A deleted screenshot comes back whole (issue 21, item 6): its audit entry keeps every format
/// the item had, and the owner's restore puts them all back, the PNG byte for byte and no format
/// added (an image item has no plain text), on both backends.
#[tokio::test]
async fn a_deleted_screenshot_is_restored_byte_for_byte() {
    let shot = &media()[0];
    for backend in ["socket", "cli"] {
        let tab = format!("mcp/workspace/shot-deleted-{backend}");
        seed(
            copyq(),
            &tab,
            &[Seeded {
                formats: shot.formats.clone(),
            }],
        );
        let before = mimes_in(&tab);
        let gw = own_gateway(backend, &format!("gateway-deleted-{backend}"), None).await;
        let shown = tab.trim_start_matches("mcp/");
        write(&gw, json!({"mode": "delete", "tab": shown, "index": 0})).await;
        assert!(tab_texts(copyq(), &tab).is_empty(), "{backend}: deleted");
        restore_entry(&gw, backend, "delete", &tab);
        assert_eq!(png_in(&tab, 0), shot.formats[0].1, "{backend}: the PNG");
        assert_eq!(
            mimes_in(&tab),
            before,
            "{backend}: every format, none added"
        );
    }
}

/// The bytes of format `mime` of row `row` of `tab`, read straight from CopyQ.
fn bytes_in(tab: &str, row: usize, mime: &str) -> Vec<u8> {
    use base64::Engine as _;
    let script = format!("tab('{tab}'); print(toBase64(getItem({row})['{mime}']))");
    let out = copyq().eval(&script, b"").expect("read back");
    base64::engine::general_purpose::STANDARD
        .decode(out.trim())
        .expect("base64")
}

/// A deleted tab's images come back whole too: `tab_delete`'s audit entry keeps every format of
/// each item holding more than text, in the tab and its sub-tabs, while they fit in
/// `audit.max_bytes`; past it an item keeps its text alone (here the JPEG, the larger).
#[tokio::test]
async fn a_deleted_tabs_images_are_restored_byte_for_byte() {
    let jpeg = &media()[2];
    let logo = &media()[1];
    let jpeg_bytes = &jpeg.formats[0].1;
    // Debian's files: the JPEG is over the cap, the logo (and its caption) under it.
    let cap = 4096;
    assert!(jpeg_bytes.len() > cap && logo.bytes("image/png") + 64 < cap);
    for (backend, cap) in [("socket", 0), ("cli", 0), ("socket", cap), ("cli", cap)] {
        let tab = format!("mcp/workspace/tab-deleted-{backend}-{cap}");
        let sub = format!("{tab}/sub");
        let text = Seeded::one("text/plain", b"kept as text".to_vec());
        let jpeg_item = Seeded {
            formats: jpeg.formats.clone(),
        };
        seed(copyq(), &tab, &[jpeg_item, text]);
        let logo_item = Seeded {
            formats: logo.formats.clone(),
        };
        seed(copyq(), &sub, &[logo_item]);
        let (tab_mimes, sub_mimes) = (mimes_in(&tab), mimes_in(&sub));
        let name = format!("gateway-tab-deleted-{backend}-{cap}");
        let gw = own_gateway(backend, &name, Some(cap as u64)).await;
        let shown = tab.trim_start_matches("mcp/");
        write(&gw, json!({"mode": "tab_delete", "path": shown})).await;
        assert!(tab_texts(copyq(), &sub).is_empty(), "{backend}: deleted");
        restore_entry(&gw, backend, "tab_delete", &tab);
        assert_eq!(png_in(&sub, 0), logo.formats[1].1, "{backend}: the logo");
        assert_eq!(mimes_in(&sub), sub_mimes, "{backend}: the logo's formats");
        assert_eq!(tab_texts(copyq(), &tab)[1], "kept as text", "{backend}");
        if cap == 0 {
            assert_eq!(
                &bytes_in(&tab, 0, "image/jpeg"),
                jpeg_bytes,
                "{backend}: the JPEG"
            );
            assert_eq!(
                mimes_in(&tab),
                tab_mimes,
                "{backend}: every format, none added"
            );
        } else {
            let mimes = mimes_in(&tab);
            assert!(
                !mimes.iter().any(|m| m == "image/jpeg"),
                "{backend}: over the cap: {mimes:?}"
            );
        }
    }
}

/// A deleted tab's password-manager items come back still marked (`x-kde-passwordManagerHint`,
/// which keeps an item from every client): `tab_delete`'s audit entry keeps every format of a
/// secret item, as it does an image's, and the restore puts the mark back. Kept as text alone,
/// the restored item lost its mark, and a read token was shown the password.
#[tokio::test]
async fn a_deleted_tabs_password_items_are_restored_still_secret() {
    let password = "correct horse battery staple 42";
    for backend in ["socket", "cli"] {
        let tab = format!("mcp/workspace/secret-tab-deleted-{backend}");
        let secret = Seeded {
            formats: vec![
                ("text/plain", password.as_bytes().to_vec()),
                ("x-kde-passwordManagerHint", b"secret".to_vec()),
            ],
        };
        seed(copyq(), &tab, &[secret]);
        let before = mimes_in(&tab);
        let gw = own_gateway(
            backend,
            &format!("gateway-secret-tab-deleted-{backend}"),
            None,
        )
        .await;
        let shown = tab.trim_start_matches("mcp/");
        write(&gw, json!({"mode": "tab_delete", "path": shown})).await;
        restore_entry(&gw, backend, "tab_delete", &tab);
        assert_eq!(
            mimes_in(&tab),
            before,
            "{backend}: every format, the mark too"
        );
        assert_eq!(
            bytes_in(&tab, 0, "x-kde-passwordManagerHint"),
            b"secret",
            "{backend}: the mark"
        );
        let r = client(&gw.url, &gw.read).await;
        let listed = ok(&r, "mcp_read", json!({"mode": "list", "tab": shown})).await;
        assert!(!listed.contains(password), "{backend}: {listed}");
    }
}
