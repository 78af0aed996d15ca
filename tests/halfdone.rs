//! Writes that fail halfway, and reads that race writes, against a real CopyQ with faults injected
//! at one exact step (tests/support/proxy.rs): what changed is said and audited, CopyQ's save
//! delays are put back whatever happens to the request, and a whole-tab read re-read row by row
//! reads the tab as it is now.

mod support;

use serde_json::json;
use support::proxy::{Fault, Proxy};
use support::*;

/// `copyq eval -- script` against `copyq`, ready to run from a proxy's fault.
fn eval_later(copyq: &PrivateCopyq, script: &str) -> impl FnOnce() + Send + 'static {
    let mut cmd = copyq.command();
    cmd.args(["eval", "--", script])
        .stdout(std::process::Stdio::null());
    move || {
        let status = cmd.status().expect("copyq eval");
        assert!(status.success(), "the fault's script failed");
    }
}

/// A search reads whole tabs through selections; a tab CopyQ unloads meanwhile comes back short and
/// is read again row by row. An item added in between must not push the oldest row out of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_tab_read_again_reads_the_tab_as_it_is_now() {
    let copyq = copyq();
    copyq
        .seed("mcp/workspace/fb", &items(&["newer", "older", "oldest-fb"]))
        .expect("seed");
    let add = eval_later(copyq, "tab('mcp/workspace/fb'); add('added meanwhile')");
    let proxy = Proxy::start(copyq, "createSelection", 1, Fault::Run(Box::new(add)));
    let gw = gateway_with(copyq, |s| proxy.configure(s)).await;
    let c = client(&gw.url, &gw.read).await;
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "search", "query": "oldest-fb", "scope": "all"}),
    )
    .await;
    assert!(proxy.fired(), "the read used no selection");
    assert_eq!(
        got,
        "mode:search|query:oldest-fb|scope:all|results:1\nworkspace/fb[3]|\"oldest-fb\"|[]|match:text"
    );
}
