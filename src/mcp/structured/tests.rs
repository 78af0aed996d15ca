//! The JSON of replies in the reference's shapes, including values that hold the separators.

use serde_json::{Map, Value, json};

use super::content;

fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

fn read(a: Value, text: &str) -> Value {
    content("mcp_read", &args(a), Ok(text)).unwrap_or_default()
}

#[test]
fn tree_rows_and_tabs() {
    let text = "info [2]\n0:|\"a|b\"|[t1,t2]|+note\n1:|\"x\"|[]\n&clip [1] [external]\n0:|\"y\"|[]";
    assert_eq!(
        read(json!({"mode": "tree", "scope": "all"}), text),
        json!({"mode": "tree", "tabs": [
            {"tab": "info", "external": false, "total": 2, "items": [
                {"index": 0, "text": "a|b", "tags": ["t1", "t2"], "has_note": true},
                {"index": 1, "text": "x", "tags": []}]},
            {"tab": "&clip", "external": true, "total": 1, "items": [
                {"index": 0, "text": "y", "tags": []}]}
        ]})
    );
}

#[test]
fn list_with_versions_and_notes() {
    let text = "mode:list|tab:in|fo|full_path:mcp/in|fo|total:5|showing:3-4\n3|\"q\"|[a]|note:n|b|v:abc\n4|\"r\"|[]|v:def";
    let a = json!({"mode": "list", "tab": "in|fo", "include_note": true, "with_version": true, "skip": 3});
    assert_eq!(
        read(a, text),
        json!({"mode": "list", "tab": "in|fo", "full_path": "mcp/in|fo", "total": 5,
            "showing": "3-4", "items": [
                {"index": 3, "text": "q", "tags": ["a"], "has_note": true, "note": "n|b", "version": "abc"},
                {"index": 4, "text": "r", "tags": [], "version": "def"}]})
    );
}

#[test]
fn item_whole_text_over_lines() {
    let text = "mode:item|tab:&clip|scope:external|index:2\ntext:line one\ntags:[x]\nline two\ntags:[t]\n+note";
    assert_eq!(
        read(json!({"mode": "item", "tab": "&clip", "index": 2}), text),
        json!({"mode": "item", "tab": "&clip", "scope": "external", "index": 2,
            "text": "line one\ntags:[x]\nline two", "tags": ["t"], "has_note": true})
    );
    let with_note = "mode:item|tab:info|full_path:mcp/info|index:0\ntext:a\ntags:[]\nnote:n1\nn2";
    assert_eq!(
        read(
            json!({"mode": "item", "tab": "info", "index": 0, "include_note": true}),
            with_note
        ),
        json!({"mode": "item", "tab": "info", "full_path": "mcp/info", "index": 0,
            "text": "a", "tags": [], "has_note": true, "note": "n1\nn2"})
    );
}

#[test]
fn search_rows() {
    let text = "mode:search|query:a|scope:all|results:2\ninfo[0]|\"abc\"|[]|match:text\n&c[1]x[3]|\"a\"|[t]|match:text,tags|external";
    assert_eq!(
        read(
            json!({"mode": "search", "query": "a", "scope": "all"}),
            text
        ),
        json!({"mode": "search", "query": "a", "scope": "all", "results": 2, "items": [
            {"tab": "info", "index": 0, "text": "abc", "tags": [], "match": ["text"], "external": false},
            {"tab": "&c[1]x", "index": 3, "text": "a", "tags": ["t"], "match": ["text", "tags"], "external": true}]})
    );
}

#[test]
fn write_and_validate() {
    let ok = "ok|mode:add|tab:info|full_path:mcp/info|index:0|text_len:3|tags:1|note:False";
    assert_eq!(
        content("mcp_write", &Map::new(), Ok(ok)).unwrap_or_default(),
        json!({"result": "ok", "mode": "add", "tab": "info", "full_path": "mcp/info", "index": 0,
            "text_len": 3, "tags": 1, "note": false})
    );
    let preview = "preview|mode:delete\ntab:info|index:0\nwill_delete:\ntext:\"a|b\"";
    assert_eq!(
        content("mcp_write", &Map::new(), Ok(preview)).unwrap_or_default(),
        json!({"result": "preview", "mode": "delete", "lines": [
            {"tab": "info", "index": 0}, {"will_delete": ""}, {"text": "a|b"}]})
    );
    let warn = "valid:true|warnings:1\nwarning|LARGE_RESPONSE|max_items=100 may return large response\nestimated_tokens:2500";
    assert_eq!(
        content("mcp_validate", &Map::new(), Ok(warn)).unwrap_or_default(),
        json!({"valid": true, "warnings": 1, "estimated_tokens": 2500, "problems": [
            {"kind": "warning", "code": "LARGE_RESPONSE", "message": "max_items=100 may return large response"}]})
    );
}

#[test]
fn errors_give_code_and_message() {
    let e = crate::mcp::ToolError::TabNotFound("x|y".into());
    assert_eq!(
        content("mcp_read", &Map::new(), Err(&e)).unwrap_or_default(),
        json!({"error": {"code": "TAB_NOT_FOUND", "message": "Tab not found: x|y"}})
    );
}

/// Items holding more than plain text (images, HTML, file lists) say so in a `content` field, and
/// `item` says whether the image was sent: the text's fields, not swallowed into the preview.
#[test]
fn what_an_item_holds_beyond_text() {
    let text = "mode:list|tab:media|full_path:mcp/media|total:2|showing:0-1\n\
                0|content:image image/png 48x48 2388B|\"\"|[]\n\
                1|content:html text/html 120B; text from text/html|\"Hello, world\"|[a]";
    assert_eq!(
        read(json!({"mode": "list", "tab": "media"}), text),
        json!({"mode": "list", "tab": "media", "full_path": "mcp/media", "total": 2,
            "showing": "0-1", "items": [
                {"index": 0, "content": "image image/png 48x48 2388B", "text": "", "tags": []},
                {"index": 1, "content": "html text/html 120B; text from text/html",
                 "text": "Hello, world", "tags": ["a"]}]})
    );
    let item = "mode:item|tab:media|full_path:mcp/media|index:0\n\
                content:image image/png 3840x2160 356762B\n\
                image:sent image/png 1568x882 180570B scaled from 3840x2160\ntext:\ntags:[]";
    assert_eq!(
        read(json!({"mode": "item", "tab": "media", "index": 0}), item),
        json!({"mode": "item", "tab": "media", "full_path": "mcp/media", "index": 0,
            "content": "image image/png 3840x2160 356762B",
            "image": "sent image/png 1568x882 180570B scaled from 3840x2160",
            "text": "", "tags": []})
    );
    let search = "mode:search|query:x|results:1\nmcp/media[1]|content:html text/html 120B; text from text/html|\"x\"|[]|match:text";
    assert_eq!(
        read(json!({"mode": "search", "query": "x"}), search)["items"][0]["content"],
        json!("html text/html 120B; text from text/html")
    );
}

/// `search` and `fetch` write JSON as their text: their structured content is that JSON, and it
/// serializes back to the text's bytes (escapes and non-ASCII included).
#[test]
fn search_and_fetch_are_their_text_s_json() {
    let search = r#"{"results":[{"id":"copyq://tab/mcp/x?index=0#0011223344556677","title":"a \"b\" «в»\n","url":"copyq://tab/mcp/x?index=0"}]}"#;
    let json = content("search", &Map::new(), Ok(search)).unwrap_or_default();
    assert_eq!(json.to_string(), search);
    let fetch = r#"{"id":"i","metadata":{"index":0,"tab":"mcp/x","tags":[]},"text":"x|y","title":"x|y","url":"u"}"#;
    let json = content("fetch", &Map::new(), Ok(fetch)).unwrap_or_default();
    assert_eq!(json.to_string(), fetch);
    let e = crate::mcp::ToolError::InvalidParam("Parameter 'id' is required".into());
    assert_eq!(
        content("fetch", &Map::new(), Err(&e)).unwrap_or_default(),
        json!({"error": {"code": "INVALID_PARAM", "message": "Parameter 'id' is required"}})
    );
}
