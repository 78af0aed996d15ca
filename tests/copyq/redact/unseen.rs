//! A token limited to some tabs never makes the gateway read the others: what CopyQ is asked is
//! watched on its socket, where every call that reads a tab names it.

use serde_json::json;

use super::copyq;
use crate::support::proxy::{Fault, Proxy, utf16};
use crate::support::*;

/// A proxy of CopyQ's socket that notes whether any call from the gateway names `tab`.
fn watching(tab: &str) -> Proxy {
    Proxy::start(copyq(), &[&utf16(tab)], 1, Fault::Run(Box::new(|| {})))
}

#[tokio::test]
async fn a_scoped_token_never_makes_copyq_read_tabs_it_does_not_cover() {
    let c = copyq();
    c.seed("mcp/scoped/seen", &items(&["visible history"]))
        .expect("seed");
    c.seed("unseen-by-scoped", &items(&["the owner's own history"]))
        .expect("seed");
    let reads = [
        (
            "search",
            json!({"mode": "search", "query": "history", "scope": "all"}),
        ),
        ("tree", json!({"mode": "tree", "scope": "all"})),
    ];
    // The CLI backend's `copyq eval` runs its script in the client, which asks CopyQ through the
    // same socket, tab by tab.
    for ((mode, args), backend) in reads
        .iter()
        .flat_map(|r| super::BACKENDS.map(|b| (r.clone(), b)))
    {
        let mode = format!("{mode} ({backend})");
        let proxy = watching("unseen-by-scoped");
        let gw = gateway_with(c, |s| {
            proxy.configure(s);
            s.copyq.backend = copyq_mcp::config::BackendKind::parse(backend).expect("backend");
        })
        .await;
        let scoped = client(&gw.url, &token_covering(&gw, Role::Read, &["mcp/scoped"])).await;
        let got = ok(&scoped, "mcp_read", args.clone()).await;
        assert!(
            got.contains("scoped/seen") && !got.contains("unseen"),
            "{mode}: {got}"
        );
        assert!(
            !proxy.fired(),
            "{mode}: CopyQ was asked for a tab the token does not cover"
        );
        // The watch sees a read of that tab when a token covering it makes one.
        let owner = client(&gw.url, &gw.read).await;
        let got = ok(&owner, "mcp_read", args).await;
        assert!(got.contains("unseen-by-scoped"), "{mode}: {got}");
        assert!(proxy.fired(), "{mode}: the watch saw nothing");
    }
}
