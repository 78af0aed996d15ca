//! Errors that say where to look: an external tab asked for without `scope` is `TAB_NOT_FOUND`
//! saying that such an external tab exists (only to a caller who may see it), while a tab that
//! exists nowhere keeps the reference's exact words.

use crate::support::*;
use serde_json::json;

fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

#[tokio::test]
async fn an_external_tab_without_scope_says_so() {
    copyq()
        .seed("Заметки дома", &items(&["external item"]))
        .expect("seed");
    let gw = gateway(copyq()).await;
    let c = client(&gw.url, &gw.read).await;
    let hint = "error|TAB_NOT_FOUND|Tab not found: Заметки дома (under mcp/; an external tab 'Заметки дома' \
                exists: pass scope: \"external\" or \"all\" to read it)";
    for mode in ["list", "item"] {
        let args = json!({"mode": mode, "tab": "Заметки дома", "index": 0});
        assert_eq!(err(&c, "mcp_read", args.clone()).await, hint, "{args}");
        assert_eq!(
            ok(&c, "mcp_validate", json!({"tool": "read", "params": args})).await,
            format!("valid:false|errors:1\n{hint}")
        );
        let with_scope =
            json!({"mode": mode, "tab": "Заметки дома", "index": 0, "scope": "external"});
        assert!(
            ok(&c, "mcp_read", with_scope)
                .await
                .contains("external item")
        );
    }
    // A tab that exists nowhere keeps the reference's words.
    assert_eq!(
        err(
            &c,
            "mcp_read",
            json!({"mode": "list", "tab": "nonexistent"})
        )
        .await,
        "error|TAB_NOT_FOUND|Tab not found: nonexistent"
    );
    // A token that does not cover the external tab learns nothing of it.
    let managed = client(&gw.url, &token_covering(&gw, Role::Read, &["managed"])).await;
    assert_eq!(
        err(
            &managed,
            "mcp_read",
            json!({"mode": "list", "tab": "Заметки дома"})
        )
        .await,
        "error|TAB_NOT_FOUND|Tab not found: Заметки дома"
    );
}

/// A scoped token asking for a tab it does not cover, in `list` and `item`, by the tool and
/// through `mcp_validate`, whichever scope names it: the answer is exactly the one for a tab that
/// exists nowhere, no hint that it exists elsewhere included. One token covers a managed subtree
/// and one external tab; the other every managed tab (so an external name asked for without
/// `scope` is looked for, and not found, among them) and one external tab.
#[tokio::test]
async fn an_uncovered_tab_answers_as_a_missing_one() {
    let copyq = copyq();
    for (tab, text) in [
        ("Заметки работы", "not yours"),
        ("mcp/workspace/elsewhere", "nor this"),
        ("mcp/workspace/mine", "yours"),
    ] {
        copyq.seed(tab, &items(&[text])).expect("seed");
    }
    let gw = gateway(copyq).await;
    let subtree = token_covering(&gw, Role::Read, &["mcp/workspace/mine", "Заметки дома"]);
    let managed = token_covering(&gw, Role::Read, &["mcp", "Заметки дома"]);
    let external = [
        ("Заметки работы", None),
        ("Заметки работы", Some("external")),
        ("Заметки работы", Some("all")),
    ];
    let managed_too = [
        ("workspace/elsewhere", None),
        ("workspace/elsewhere", Some("all")),
        ("no-such-tab", None),
    ];
    let c = client(&gw.url, &subtree).await;
    for (tab, scope) in external.iter().chain(&managed_too) {
        assert_missing(&c, tab, *scope).await;
    }
    let c2 = client(&gw.url, &managed).await;
    for (tab, scope) in &external {
        assert_missing(&c2, tab, *scope).await;
    }
    assert_eq!(
        ok(
            &c,
            "mcp_read",
            json!({"mode": "item", "tab": "workspace/mine", "index": 0})
        )
        .await,
        "mode:item|tab:workspace/mine|full_path:mcp/workspace/mine|index:0\ntext:yours\ntags:[]"
    );
}

/// `list` and `item` of `tab` in `scope` answer as for a tab that exists nowhere.
async fn assert_missing(c: &Client, tab: &str, scope: Option<&str>) {
    let missing = format!("error|TAB_NOT_FOUND|Tab not found: {tab}");
    for mode in ["list", "item"] {
        let mut args = json!({"mode": mode, "tab": tab, "index": 0});
        if let Some(scope) = scope {
            args["scope"] = json!(scope);
        }
        assert_eq!(err(c, "mcp_read", args.clone()).await, missing, "{args}");
        assert_eq!(
            ok(c, "mcp_validate", json!({"tool": "read", "params": args})).await,
            format!("valid:false|errors:1\n{missing}")
        );
    }
}

/// A person's session name may have capitals (`copyq -s Work`): CopyQ 14 and later keep them in the
/// socket's name, earlier versions lower-case it. The socket backend finds the server on every
/// version of the matrix.
#[tokio::test]
async fn a_session_named_with_capitals_is_reached() {
    let chroot = std::env::var_os("COPYQ_MCP_TEST_CHROOT").map(std::path::PathBuf::from);
    let cq = PrivateCopyq::start_named(chroot, "Work").expect("a private CopyQ");
    cq.seed("mcp/desk", &items(&["on the Work session"]))
        .expect("seed");
    let gw = gateway(&cq).await;
    let c = client(&gw.url, &gw.read).await;
    let listed = ok(&c, "mcp_read", json!({"mode": "list", "tab": "mcp/desk"})).await;
    assert!(listed.contains("on the Work session"), "{listed}");
}
