//! What a caller cannot bend or borrow, proved through the gateway (the unit tests prove the parts):
//! a tabs claim it cannot parse, even signed with the gateway's key, is a 401 and never "all tabs";
//! a session opened by one token is not usable by another token of the same role.

use crate::auth::{TOOLS_LIST, claims, copyq, in_session, key, open_session, sign};
use crate::support::*;
use copyq_mcp::auth::Role;
use jsonwebtoken::Algorithm;
use serde_json::{Value, json};

/// A token signed with the gateway's own key whose `tabs` claim the gateway did not write: each
/// gets the bare 401 every bad token gets, never the whole clipboard. The same token with a
/// well-formed claim is taken and covers only what that claim says.
#[tokio::test]
async fn a_signed_token_with_a_malformed_tabs_claim_is_not_all_tabs() {
    copyq()
        .seed("mcp/workspace/claimed", &items(&["for all-tab tokens"]))
        .expect("seed");
    let gw = gateway(copyq()).await;
    let k = key(&gw);
    let ep = copyq_mcp::store::Store::open(&gw.settings.data_dir())
        .expect("store")
        .epoch()
        .id;
    let with_tabs = |tabs: Value| {
        let mut c = claims(None, "copyq-mcp", &ep);
        c["tabs"] = tabs;
        sign(c, Algorithm::HS256, &k)
    };
    for odd in [
        json!("all"),
        json!(true),
        json!(0),
        json!([""]),
        json!({"every": true}),
        json!({"mcp": "workspace"}),
        json!({"mcp": [""], "all": true}),
        json!({"ext": [1]}),
    ] {
        let (status, _, body) =
            raw_post(&gw.url, Some(&with_tabs(odd.clone())), TOOLS_LIST()).await;
        assert_eq!((status, body.as_str()), (401, "Unauthorized\n"), "{odd}");
    }
    let scoped = client(&gw.url, &with_tabs(json!({"mcp": ["workspace/other"]}))).await;
    assert_eq!(
        err(
            &scoped,
            "mcp_read",
            json!({"mode": "list", "tab": "workspace/claimed"})
        )
        .await,
        "error|TAB_NOT_FOUND|Tab not found: workspace/claimed"
    );
}

/// With sessions on, a session belongs to the caller that opened it, not to its role: a second
/// write token naming a write token's session gets the 404 of an unknown session, to call a tool
/// in it or to end it, and the session stays its owner's.
#[tokio::test]
async fn a_session_is_not_usable_by_another_token_of_the_same_role() {
    let gw = gateway_with(copyq(), |s| s.server.sessions = true).await;
    let other = token_covering(&gw, Role::Write, &["all"]);
    let id = open_session(&gw.url, &gw.write).await;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "mcp_write",
        "arguments": {"mode": "add", "tab": "workspace/borrowed", "text": "through another's session"}}});
    assert_eq!(in_session(&gw.url, &other, Some(&id), call).await.0, 404);
    let ended = reqwest::Client::new()
        .delete(&gw.url)
        .header("authorization", format!("Bearer {other}"))
        .header("mcp-session-id", &id)
        .send()
        .await
        .expect("http")
        .status()
        .as_u16();
    assert_eq!(ended, 404, "nor can it end the session");
    assert!(
        copyq_tabs(copyq())
            .iter()
            .all(|t| t != "mcp/workspace/borrowed"),
        "the borrowed session wrote"
    );
    assert_eq!(
        in_session(&gw.url, &gw.write, Some(&id), TOOLS_LIST())
            .await
            .0,
        200,
        "still the owner's"
    );
}
