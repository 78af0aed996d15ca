//! The exact replies of `tree`, `list`, `item` and `search` for images, HTML and file lists, on
//! both backends, and the two backends compared call for call.

use serde_json::json;

use super::{media, png_size, session};
use crate::support::*;

const DERIVED_HTML: &str = "Release notes\n\nFixed two crashes & one leak in the importer.";
const HTML_PREVIEW: &str = "Release notes  Fixed two crashes & one leak in the importer.";
const PATHS: &str = "/home/anna/Documents/Q3 report.pdf\n/home/anna/Фото/IMG_0412.jpg";

fn shot() -> String {
    let png = &media()[0].formats[0].1;
    let (w, h) = png_size(png);
    format!("image image/png {w}x{h} {}B", png.len())
}

/// The list of the seeded tab, written out from the seed.
fn expected_list() -> String {
    let m = media();
    [
        "mode:list|tab:workspace/media|full_path:mcp/workspace/media|total:8|showing:0-7"
            .to_owned(),
        format!("0|content:{}|\"\"|[]", shot()),
        format!(
            "1|content:image image/png 48x48 {}B|\"Debian logo\"|[]",
            m[1].bytes("image/png")
        ),
        format!(
            "2|content:image image/jpeg 493x58 {}B|\"\"|[]",
            m[2].bytes("image/jpeg")
        ),
        format!(
            "3|content:image image/gif 460x497 {}B|\"\"|[]",
            m[3].bytes("image/gif")
        ),
        format!(
            "4|content:html text/html {}B; text from text/html|\"{HTML_PREVIEW}\"|[]",
            m[4].bytes("text/html")
        ),
        format!(
            "5|content:files text/uri-list {}B; text from text/uri-list|\"{}\"|[]",
            m[5].bytes("text/uri-list"),
            PATHS.replace('\n', " ")
        ),
        format!(
            "6|content:image image/svg+xml {}B|\"\"|[]",
            m[6].bytes("image/svg+xml")
        ),
        "7|\"plain\"|[]".to_owned(),
    ]
    .join("\n")
}

async fn each_backend(check: impl AsyncFn(&Client)) {
    for backend in ["socket", "cli"] {
        let (_gw, c) = session(backend).await;
        check(&c).await;
    }
}

#[tokio::test]
async fn list_says_what_each_item_holds() {
    each_backend(async |c| {
        let got = ok(
            c,
            "mcp_read",
            json!({"mode": "list", "tab": "workspace/media"}),
        )
        .await;
        assert_eq!(got, expected_list());
    })
    .await;
}

#[tokio::test]
async fn item_shows_derived_text_whole() {
    let m = media();
    each_backend(async |c| {
        let got = ok(c, "mcp_read", json!({"mode": "item", "tab": "workspace/media", "index": 4})).await;
        let expected = format!(
            "mode:item|tab:workspace/media|full_path:mcp/workspace/media|index:4\n\
             content:html text/html {}B; text from text/html\ntext:{DERIVED_HTML}\ntags:[]",
            m[4].bytes("text/html")
        );
        assert_eq!(got, expected);
        let got = ok(c, "mcp_read", json!({"mode": "item", "tab": "workspace/media", "index": 5})).await;
        let expected = format!(
            "mode:item|tab:workspace/media|full_path:mcp/workspace/media|index:5\n\
             content:files text/uri-list {}B; text from text/uri-list\ntext:{PATHS}\ntags:[]",
            m[5].bytes("text/uri-list")
        );
        assert_eq!(got, expected);
        // A text item is exactly as before.
        let got = ok(c, "mcp_read", json!({"mode": "item", "tab": "workspace/media", "index": 7})).await;
        assert_eq!(
            got,
            "mode:item|tab:workspace/media|full_path:mcp/workspace/media|index:7\ntext:plain\ntags:[]"
        );
    })
    .await;
}

#[tokio::test]
async fn search_finds_derived_text_and_tree_describes_images() {
    let m = media();
    each_backend(async |c| {
        let got = ok(c, "mcp_read", json!({"mode": "search", "query": "importer|Фото"})).await;
        let expected = format!(
            "mode:search|query:importer|Фото|scope:mcp|results:2\n\
             workspace/media[4]|content:html text/html {}B; text from text/html|\"{HTML_PREVIEW}\"|[]|match:text\n\
             workspace/media[5]|content:files text/uri-list {}B; text from text/uri-list|\"{}\"|[]|match:text",
            m[4].bytes("text/html"),
            m[5].bytes("text/uri-list"),
            PATHS.replace('\n', " ")
        );
        assert_eq!(got, expected);
        let got = ok(c, "mcp_read", json!({"mode": "tree", "scope": "external", "max_depth": 1})).await;
        let expected = format!("screens [1] [external]\n0:|content:{}|\"\"|[]", shot());
        assert!(got.ends_with(&expected), "{got}");
    })
    .await;
}
