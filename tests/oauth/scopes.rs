//! The consent page's choice of tabs: the grant keeps it, every token of the grant (refreshed
//! ones too) covers just those tabs, and a list the page cannot read is shown again, with what was
//! typed and without spending a passphrase try.

use super::*;

/// POST the consent form with `role`, the tabs choice and the typed list: (status, Location, body).
async fn consent_tabs(
    gw: &Gateway,
    html: &str,
    cookie: &str,
    tabs: &str,
    list: &str,
) -> (u16, Option<String>, String) {
    let fields = [
        ("passphrase", PASS),
        ("role", "read"),
        ("tabs", tabs),
        ("tab_list", list),
        ("action", "approve"),
    ];
    let res = post_consent(gw, html, cookie, &fields).await;
    let (status, location) = (res.status().as_u16(), location(&res));
    (status, location, res.text().await.unwrap_or_default())
}

async fn tree_all(gw: &Gateway, access: &str) -> String {
    let c = client(&gw.url, access).await;
    ok(
        &c,
        "mcp_read",
        json!({"mode": "tree", "scope": "all", "max_items": 0, "max_depth": 9}),
    )
    .await
}

#[tokio::test]
async fn the_chosen_tabs_hold_for_every_token_of_the_grant() {
    copyq()
        .seed("mcp/workspace/oauth-scope", &items(&["a"]))
        .expect("seed");
    copyq()
        .seed("oauth-scope-external", &items(&["b", "c"]))
        .expect("seed");
    let gw = with_passphrase(gateway(copyq()).await);
    let client_id = public_client(&gw).await;
    let (status, html, cookie, _) =
        authorize(&gw, &auth_params(&client_id, &challenge(VERIFIER))).await;
    assert_eq!(status, 200);
    for says in [
        "name=\"tabs\" value=\"all\" checked",
        "name=\"tabs\" value=\"managed\"",
        "name=\"tabs\" value=\"list\"",
        "<textarea name=\"tab_list\"",
    ] {
        assert!(html.contains(says), "missing {says:?}");
    }
    let cookie = cookie.expect("cookie");

    // A list the page cannot take comes back with a reason and what was typed, as often as needed
    // (no passphrase try is spent: five wrong ones would cancel the request).
    for _ in 0..6 {
        let (status, location, page) =
            consent_tabs(&gw, &html, &cookie, "list", "mcp/workspace/../info").await;
        assert_eq!((status, location), (400, None));
        assert!(
            page.contains("Only these tabs: Invalid tab path &#39;mcp/workspace/../info&#39;")
                && page.contains(">mcp/workspace/../info</textarea>")
                && page.contains("name=\"tabs\" value=\"list\" checked"),
            "{page}"
        );
    }
    let (status, location, page) = consent_tabs(
        &gw,
        &html,
        &cookie,
        "list",
        "mcp/workspace/oauth-scope\r\n\r\noauth-scope-external\r\n",
    )
    .await;
    assert_eq!(status, 303, "{page}");
    let code = query(&location.expect("redirect"))["code"].clone();
    let (status, tokens) = exchange(&gw, &client_id, &code, VERIFIER).await;
    assert_eq!(status, 200, "{tokens}");
    let only = "workspace/oauth-scope [1]\noauth-scope-external [2] [external]";
    let access = tokens["access_token"].as_str().expect("access");
    assert_eq!(tree_all(&gw, access).await, only);

    let refresh = tokens["refresh_token"].as_str().expect("refresh");
    let (status, renewed, _) = token(
        &gw,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh),
            ("client_id", &client_id),
        ],
    )
    .await;
    assert_eq!(status, 200, "{renewed}");
    let access = renewed["access_token"].as_str().expect("access");
    assert_eq!(
        tree_all(&gw, access).await,
        only,
        "a refresh keeps the tabs"
    );

    let grants = Store::open(&gw.settings.data_dir())
        .expect("store")
        .grants()
        .expect("grants");
    assert_eq!(
        grants
            .iter()
            .find(|g| g.client_id == client_id)
            .and_then(|g| g.tabs.clone())
            .as_deref(),
        Some(r#"{"mcp":["workspace/oauth-scope"],"ext":["oauth-scope-external"]}"#)
    );
}

#[tokio::test]
async fn managed_only_and_the_default_all() {
    copyq()
        .seed("oauth-scope-ext-b", &items(&["b", "c"]))
        .expect("seed");
    let gw = with_passphrase(gateway(copyq()).await);
    let client_id = public_client(&gw).await;
    for (choice, sees_external) in [("managed", false), ("all", true), ("", true)] {
        let (_, html, cookie, _) =
            authorize(&gw, &auth_params(&client_id, &challenge(VERIFIER))).await;
        let (status, location, page) =
            consent_tabs(&gw, &html, &cookie.expect("cookie"), choice, "ignored").await;
        assert_eq!(status, 303, "{page}");
        let code = query(&location.expect("redirect"))["code"].clone();
        let (_, tokens) = exchange(&gw, &client_id, &code, VERIFIER).await;
        let tree = tree_all(&gw, tokens["access_token"].as_str().expect("access")).await;
        assert_eq!(
            tree.contains("oauth-scope-ext-b [2] [external]"),
            sees_external,
            "{choice:?}: {tree}"
        );
        assert!(!tree.is_empty() || choice == "managed");
        assert!(
            tree.lines().all(|l| !l.ends_with("[external]")) || sees_external,
            "{choice:?}: {tree}"
        );
    }
}

/// "Only these tabs" takes each line as a tab: `all` (or `managed`) typed there is the tab of that
/// name, never every tab (the radio buttons choose those); an empty list is refused.
#[tokio::test]
async fn a_list_saying_all_means_the_tab_named_all() {
    copyq().seed("all", &items(&["x"])).expect("seed");
    copyq()
        .seed("oauth-scope-ext-c", &items(&["y"]))
        .expect("seed");
    let gw = with_passphrase(gateway(copyq()).await);
    let client_id = public_client(&gw).await;
    let (_, html, cookie, _) = authorize(&gw, &auth_params(&client_id, &challenge(VERIFIER))).await;
    let cookie = cookie.expect("cookie");
    let (status, location, page) = consent_tabs(&gw, &html, &cookie, "list", "all").await;
    assert_eq!(status, 303, "{page}");
    let code = query(&location.expect("redirect"))["code"].clone();
    let (_, tokens) = exchange(&gw, &client_id, &code, VERIFIER).await;
    let tree = tree_all(&gw, tokens["access_token"].as_str().expect("access")).await;
    assert_eq!(tree, "all [1] [external]");
    let grants = Store::open(&gw.settings.data_dir())
        .expect("store")
        .grants()
        .expect("grants");
    assert_eq!(
        grants
            .iter()
            .find(|g| g.client_id == client_id)
            .and_then(|g| g.tabs.clone())
            .as_deref(),
        Some(r#"{"ext":["all"]}"#)
    );
    let (_, html, cookie, _) = authorize(&gw, &auth_params(&client_id, &challenge(VERIFIER))).await;
    let (status, location, page) =
        consent_tabs(&gw, &html, &cookie.expect("cookie"), "list", " \r\n").await;
    assert_eq!((status, location), (400, None));
    assert!(
        page.contains("Only these tabs: no tabs given: type one tab per line"),
        "{page}"
    );
}
