//! The add tool's groups over the socket backend, against the stand-in server: what an add asks
//! of CopyQ, and a look-alike tab refused by the group's own tab list.

use std::sync::{Arc, PoisonError};

use serde_json::{Map, Value, json};

use crate::auth::{Principal, Role};
use crate::backend::socket::stand_in::tests::started;
use crate::backend::{Backend, Item};
use crate::clipboard::Roots;
use crate::mcp::ToolState;

fn owner() -> Principal {
    Principal {
        subject: "test".into(),
        role: Role::Write,
        token_id: "j".into(),
        grant: None,
        tabs: Default::default(),
        expires: None,
    }
}

async fn add(tools: &Arc<ToolState>, tab: &str, text: &str) -> String {
    let args: Map<String, Value> = json!({"mode": "add", "tab": tab, "text": text})
        .as_object()
        .cloned()
        .unwrap_or_default();
    match super::call(tools, &owner(), &args).await {
        Ok(reply) => reply,
        Err(e) => e.line(),
    }
}

/// An add asks CopyQ for the tab list twice: the group's, under the write lock (the tab's name
/// and room checked there), and the insert's verify (it landed in a tab of that name). Its plan
/// asks nothing once `maxitems` is known: the plan's own tab list was a round trip of four,
/// older than the group's by the time the group wrote (issue 22, stop 53).
#[tokio::test]
async fn an_add_asks_for_the_tab_list_in_its_group_and_its_verify_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (backend, _server, layout, model) = started(&dir).await;
    layout.expect("the stand-in answers");
    let tools = Arc::new(ToolState::new(Backend::Socket(backend), Roots::default()));
    let lists = || {
        model
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .tab_lists()
    };
    // The first into a new tab, the others into it.
    for text in ["one", "two", "three"] {
        let before = lists();
        let got = add(&tools, "workspace/a", text).await;
        assert!(got.starts_with("ok|mode:add|tab:workspace/a|"), "{got}");
        assert_eq!(lists() - before, 2, "add {text}");
    }
    let texts = model
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .to_json();
    assert_eq!(
        texts["tabs"][0]["items"],
        json!(["three", "two", "one"]),
        "{texts}"
    );
}

/// A look-alike tab (`&mcp/...`, which CopyQ would take for a missing `mcp/...`) is found by the
/// group's tab list: that add is refused, naming it, with nothing written anywhere; an add of the
/// same group to another tab is made.
#[tokio::test]
async fn a_group_refuses_an_add_copyq_would_make_in_a_look_alike_tab() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (backend, _server, layout, model) = started(&dir).await;
    layout.expect("the stand-in answers");
    backend
        .insert("&mcp/workspace/kh", &Item::new("owner's", &[], ""), 200)
        .await
        .expect("seed");
    let tools = Arc::new(ToolState::new(Backend::Socket(backend), Roots::default()));
    // Both queued before their group's leader takes the write lock (held here), so one group.
    let held = tools.writes.clone().write_owned().await;
    let (refused, made, ()) = tokio::join!(
        add(&tools, "workspace/kh", "x"),
        add(&tools, "workspace/other", "y"),
        async {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            drop(held);
        }
    );
    assert_eq!(
        refused,
        "error|PERMISSION_DENIED|Tab 'workspace/kh' does not exist, and CopyQ would write to its existing tab \
         '&mcp/workspace/kh' instead (CopyQ ignores '&' in tab names); nothing was changed. Rename that tab or \
         use another name"
    );
    assert!(
        made.starts_with("ok|mode:add|tab:workspace/other|"),
        "{made}"
    );
    let texts = model
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .to_json();
    assert_eq!(
        texts,
        json!({"tabs": [
            {"name": "&mcp/workspace/kh", "items": ["owner's"]},
            {"name": "mcp/workspace/other", "items": ["y"]},
        ]})
    );
}
