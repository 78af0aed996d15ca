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
