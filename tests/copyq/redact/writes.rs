//! No way around the mask through a write token, under `redact = "all"` (managed tabs masked):
//! `mcp_validate` and previews answer from the masked text, a `substitute` touching a mask is
//! refused, a version a read returned works for an update, a change of the secret under an
//! unchanged mask is still caught, and nothing writes `[redacted:KIND]` over a secret.

use copyq_mcp::privacy::Redact;
use serde_json::{Value, json};

use super::copyq;
use crate::support::*;

/// Not the suite's `AKIAZ...` key, which its searches look for.
const KEY: &str = "AKIAQYLPMN5HTIQR7WDE";
const OTHER: &str = "AKIAQYLPMN5HTIQR7WDF";
const SHOWN: &str = "aws [redacted:aws-access-token] end";

/// A gateway masking every tab, and a write token's client; `tab` (under `mcp/workspace/`)
/// holds one item, `aws KEY end`.
async fn masked(tab: &str) -> (Gateway, Client) {
    copyq()
        .seed(
            &format!("mcp/workspace/{tab}"),
            &items(&[&format!("aws {KEY} end")]),
        )
        .expect("seed");
    let gw = gateway_with(copyq(), |s| s.privacy.redact = Redact::All).await;
    let c = client(&gw.url, &gw.write).await;
    (gw, c)
}

fn update(tab: &str, extra: Value) -> Value {
    let mut args =
        json!({"mode": "update", "tab": format!("workspace/{tab}"), "index": 0, "field": "text"});
    for (k, v) in extra.as_object().expect("object") {
        args[k] = v.clone();
    }
    args
}

async fn validate(c: &Client, params: Value) -> String {
    ok(
        c,
        "mcp_validate",
        json!({"tool": "write", "params": params}),
    )
    .await
}

#[tokio::test]
async fn validate_cannot_tell_a_right_guess_of_a_secret_from_a_wrong_one() {
    let (_gw, c) = masked("masks-guess").await;
    let probe = |guess: &str| {
        update(
            "masks-guess",
            json!({"edit_mode": "substitute", "match": guess, "text": "x"}),
        )
    };
    for guess in ["AKIAQY", "AKIAQZ", &KEY[..19]] {
        assert_eq!(
            validate(&c, probe(guess)).await,
            format!(
                "valid:false|errors:1\nerror|MATCH_NOT_FOUND|Match string not found: '{guess}'"
            ),
        );
        assert_eq!(
            err(&c, "mcp_write", probe(guess)).await,
            format!("error|MATCH_NOT_FOUND|Match string not found: '{guess}'")
        );
    }
    let touching = "error|PERMISSION_DENIED|Item 0 of 'workspace/masks-guess' holds redacted text, and the match \
                    'aws [redacted' touches it: a substitute may match only text shown outside [redacted:...]; \
                    nothing was changed";
    assert_eq!(
        validate(&c, probe("aws [redacted")).await,
        format!("valid:false|errors:1\n{touching}")
    );
    assert_eq!(err(&c, "mcp_write", probe("aws [redacted")).await, touching);
    // Text outside the mask is edited, and the secret kept underneath.
    let done = ok(
        &c,
        "mcp_write",
        update(
            "masks-guess",
            json!({"edit_mode": "substitute", "match": "end", "text": "fin"}),
        ),
    )
    .await;
    assert_eq!(
        done,
        "ok|mode:update|tab:workspace/masks-guess|full_path:mcp/workspace/masks-guess|index:0|field:text"
    );
    assert_eq!(
        tab_texts(copyq(), "mcp/workspace/masks-guess"),
        [format!("aws {KEY} fin")]
    );
}

#[tokio::test]
async fn a_preview_never_shows_a_secret_an_edit_would_unmask() {
    let (_gw, c) = masked("masks-preview").await;
    // `end` made `Q end`: the key runs on into a `Q` and no longer reads as a key.
    let breaking = update(
        "masks-preview",
        json!({"edit_mode": "substitute", "match": " end", "text": "Q end", "intent": "preview"}),
    );
    let refused = "error|PERMISSION_DENIED|Item 0 of 'workspace/masks-preview' holds redacted text, and this edit \
                   would change the text around a secret so that it is no longer recognised, and shown; nothing \
                   was changed";
    assert_eq!(err(&c, "mcp_write", breaking.clone()).await, refused);
    assert_eq!(
        validate(&c, breaking).await,
        format!("valid:false|errors:1\n{refused}")
    );
    let append = update(
        "masks-preview",
        json!({"edit_mode": "append", "text": "!", "intent": "preview"}),
    );
    assert_eq!(
        ok(&c, "mcp_write", append).await,
        format!(
            "preview|mode:update\ntab:workspace/masks-preview|index:0|field:text|edit_mode:append\n\
             before:\"{SHOWN}\"\nafter:\"{SHOWN}!\""
        )
    );
    assert_eq!(
        tab_texts(copyq(), "mcp/workspace/masks-preview"),
        [format!("aws {KEY} end")]
    );
}

#[tokio::test]
async fn an_update_never_writes_a_mask_over_the_secret() {
    let (_gw, c) = masked("masks-keep").await;
    for args in [
        json!({"edit_mode": "replace", "text": format!("{SHOWN} edited")}),
        json!({"edit_mode": "substitute", "match": "end", "text": "[redacted:aws-access-token]"}),
    ] {
        let got = err(&c, "mcp_write", update("masks-keep", args)).await;
        assert_eq!(
            got,
            "error|PERMISSION_DENIED|Item 0 of 'workspace/masks-keep' holds redacted text, and the new text repeats \
             a [redacted:...] mask of it: written back, the mask would replace the secret. Edit the text around it \
             with edit_mode=substitute, or give a value without the mask; nothing was changed"
        );
    }
    assert_eq!(
        tab_texts(copyq(), "mcp/workspace/masks-keep"),
        [format!("aws {KEY} end")]
    );
}

/// The version of an item with nothing masked: eight hex digits of SHA-256 over the text, tags
/// and note, which anyone can compute for a guess.
fn plain_version(it: &Item) -> String {
    use sha2::Digest;
    let joined = format!("{}\0{}\0{}", it.text, it.tags.join(","), it.note);
    let hash = sha2::Sha256::digest(joined.as_bytes());
    hash.iter().take(4).map(|b| format!("{b:02x}")).collect()
}

/// `version:` of item 0 of `tab`, as a read shows it.
async fn read_version(c: &Client, tab: &str) -> String {
    let item = ok(
        c,
        "mcp_read",
        json!({"mode": "item", "tab": format!("workspace/{tab}"), "index": 0, "with_version": true}),
    )
    .await;
    let head = item.lines().next().unwrap_or_default();
    head.rsplit_once("|version:")
        .map(|(_, v)| v.to_owned())
        .unwrap_or_else(|| panic!("no version: {item}"))
}

#[tokio::test]
async fn a_version_from_a_read_works_and_a_changed_secret_under_it_is_caught() {
    let (_gw, c) = masked("masks-version").await;
    let full = "mcp/workspace/masks-version";
    let v = read_version(&c, "masks-version").await;
    let raw = Item::new(&format!("aws {KEY} end"), &[], "");
    assert_ne!(v, plain_version(&raw), "the raw item's hash");
    let list = ok(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "workspace/masks-version", "with_version": true}),
    )
    .await;
    assert!(list.ends_with(&format!("0|\"{SHOWN}\"|[]|v:{v}")), "{list}");
    let tag = |version: &str| {
        update(
            "masks-version",
            json!({"field": "tags", "tags": ["t"], "edit_mode": "append", "expected_version": version}),
        )
    };
    ok(&c, "mcp_write", tag(&v)).await;
    // The secret changes under an unchanged mask: the version read before no longer holds.
    let v = read_version(&c, "masks-version").await;
    let script = format!("tab('{full}'); change(0, 'text/plain', 'aws {OTHER} end')");
    copyq()
        .eval(&script, b"")
        .expect("change the secret in CopyQ");
    let now = read_version(&c, "masks-version").await;
    assert_ne!(now, v);
    let changed = Item::new(&format!("aws {OTHER} end"), &["t"], "");
    assert_ne!(now, plain_version(&changed));
    assert_eq!(
        err(&c, "mcp_write", tag(&v)).await,
        format!(
            "error|VERSION_MISMATCH|Item 0 of 'workspace/masks-version' is not the version you read (expected {v}, \
             found {now}): indices shift as items are added or removed; nothing was changed. Read the tab again"
        )
    );
    assert_eq!(tab_texts(copyq(), full), [format!("aws {OTHER} end")]);
}
