//! A subscription ends with its token (issue 23): the gateway checks every 2 s that the token
//! behind a followed tab still holds, and once it has expired or been revoked it closes the
//! subscription, which a real client (the Python SDK 2.x, `subscriptions/listen` over HTTP) sees
//! as the server's graceful end of its stream, with nothing changed in the tab meanwhile.

use std::io::Write;
use std::time::Duration;

use super::{Sdk, Watcher, copyq, gateway_for};
use crate::support::*;
use copyq_mcp::auth::Role;
use copyq_mcp::config::BackendKind;
use serde_json::{Value, json};

// A tab each: the two tests run at once against one CopyQ, and one's seeding is a change the
// other's subscription would report (CI saw `{"updated": ...}` where the end was expected).
const EXPIRING: &str = "mcp/workspace/ending-expiry";
const EXPIRING_URI: &str = "copyq://tab/mcp/workspace/ending-expiry";
const REVOKED: &str = "mcp/workspace/ending-revoked";
const REVOKED_URI: &str = "copyq://tab/mcp/workspace/ending-revoked";

impl Watcher {
    /// The client's next line (within a minute: far past the 2 s check), then its exit.
    fn ended(mut self) -> Option<Value> {
        tokio::task::block_in_place(|| {
            let line = self.next(Duration::from_secs(60));
            if line.is_none() {
                let _ = self.child.kill();
            }
            let status = self.child.wait().expect("wait");
            assert!(
                line.is_none() || status.success(),
                "the client failed: {status}"
            );
            line
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_ends_when_its_token_expires() {
    copyq()
        .seed(EXPIRING, &items(&["still here"]))
        .expect("seed");
    let gw = gateway_for(Sdk::PythonModern, BackendKind::Socket).await;
    // The token is issued once the client has loaded: issued before, its lifetime went on the
    // Python imports, which took longer than all of it on a loaded machine (the client's first
    // request was refused, and the test saw no `watching`).
    let mut watcher = Watcher::spawn(Sdk::PythonModern, &gw.url, "-", EXPIRING_URI);
    let ready = tokio::task::block_in_place(|| watcher.next(Duration::from_secs(60)));
    assert_eq!(ready, Some(json!({ "ready": true })));
    // Long enough to connect and subscribe on a loaded machine, short for a test.
    let ttl = Some(Duration::from_secs(8));
    let short = copyq_mcp::app::token_service(&gw.settings)
        .expect("token service")
        .issue("short-lived", Role::Read, ttl)
        .expect("issue");
    let mut stdin = watcher.child.stdin.take().expect("stdin");
    writeln!(stdin, "{short}").expect("send the token");
    watcher.subscribed(Sdk::PythonModern, EXPIRING_URI);
    assert_eq!(watcher.ended(), Some(json!({ "ended": EXPIRING_URI })));
    assert_eq!(tab_texts(copyq(), EXPIRING), ["still here"]);
}

/// A token the owner issues (`token issue`) while the gateway runs, and revokes (`token revoke
/// NAME`) while it is subscribed. Issued by the command, not in this process: a `Store::open` of
/// the gateway's database here (as `token_service` does) while the gateway runs left the gateway's
/// own connection blind to later writes from other processes (the revocation went unseen for
/// 30 s, and a ping with the revoked token got 200), though a fresh gateway sees it at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_ends_when_its_token_is_revoked() {
    copyq()
        .seed(REVOKED, &items(&["still here"]))
        .expect("seed");
    // A data dir of its own: the suite's other gateways, opening the shared one in this process,
    // would leave this gateway's connection blind to the revocation (see above).
    let dir = copyq().dir().join("gateway-revoked");
    let gw = gateway_with(copyq(), |s| {
        s.copyq.backend = BackendKind::Socket;
        s.server.sessions = false;
        s.data_dir = dir.display().to_string();
    })
    .await;
    let (issued, token, stderr) = owner(
        &gw,
        &[
            "token",
            "issue",
            "--role",
            "read",
            "--name",
            "watch-revoked",
        ],
    );
    assert!(issued, "{stderr}");
    let watcher = Watcher::start(Sdk::PythonModern, &gw.url, token.trim(), REVOKED_URI).await;
    let (revoked, _, stderr) = owner(&gw, &["token", "revoke", "watch-revoked"]);
    assert!(revoked, "{stderr}");
    assert_eq!(watcher.ended(), Some(json!({ "ended": REVOKED_URI })));
}
