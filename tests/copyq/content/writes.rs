//! Writes stay text (issue 21, item 6): `update` and `move` of an item holding an image keep the
//! image, byte for byte, on both backends; the reply of a read after them still describes it.

use serde_json::json;

use super::{Seeded, copyq, media, seed, session};
use crate::support::*;

/// The PNG bytes row `row` of `tab` holds in CopyQ, read straight from CopyQ.
fn png_in(tab: &str, row: usize) -> Vec<u8> {
    use base64::Engine as _;
    let script = format!("tab('{tab}'); print(toBase64(getItem({row})['image/png']))");
    let out = copyq().eval(&script, b"").expect("read back");
    base64::engine::general_purpose::STANDARD
        .decode(out.trim())
        .expect("base64")
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
