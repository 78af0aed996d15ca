//! A write partly made on the CLI backend whose failing step left a line on CopyQ's stderr (which
//! may echo clipboard contents): the client and the audit log get a reference, only the gateway's
//! log gets the line. The move is still said and audited as partial.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;

use serde_json::json;

use crate::faults::issue_token;
use crate::support::*;

/// What the stand-in `copyq` writes on stderr when the move fails.
const LEAK: &str = "clipboard text 5e1a echoed by CopyQ";

/// A `copyq` that passes every call to the real one but a move, which it fails halfway: the item
/// "copied" to its target (`made:copy`, as the bundled script says it), then CopyQ's error on stderr.
fn failing_move(dir: &std::path::Path, copyq: &PrivateCopyq) -> String {
    let path = dir.join("copyq");
    let script = format!(
        "#!/bin/sh\ninput=$(cat)\ncase \"$input\" in\n  *'\"op\":\"move\"'*)\n    echo 'made:copy'\n    \
         echo 'ScriptError: {LEAK}' >&2\n    exit 1;;\nesac\nprintf '%s' \"$input\" | exec '{}' \"$@\"\n",
        copyq.cli_command().display()
    );
    std::fs::write(&path, script).expect("script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copyq_s_stderr_from_a_partial_write_never_reaches_the_client() {
    let copyq = super::copyq();
    copyq
        .seed("mcp/workspace/leak-src", &items(&["stays", "moving"]))
        .expect("seed");
    copyq
        .seed("mcp/workspace/leak-dst", &items(&["there"]))
        .expect("seed");
    let dir = tempfile::tempdir().expect("dir");
    let command = failing_move(dir.path(), copyq);
    let data = tempfile::tempdir().expect("data");
    let token = issue_token(data.path(), "write", "partial");
    let env = [
        ("COPYQ_MCP__COPYQ__BACKEND", "cli"),
        ("COPYQ_MCP__COPYQ__COMMAND", command.as_str()),
    ];
    let (mut gateway, url) = spawn_serve(copyq, data.path(), &env, Stdio::piped());
    let c = client(&url, &token).await;
    let got = err(
        &c,
        "mcp_write",
        json!({"mode": "move", "tab": "workspace/leak-src", "index": 1, "to_tab": "workspace/leak-dst"}),
    )
    .await;
    let _ = gateway.kill();
    let _ = gateway.wait();
    assert!(!got.contains("5e1a"), "{got}");
    let (reference, entry) = got
        .strip_prefix(
            "error|COPYQ_ERROR|This move was partly made: the item was copied to 'workspace/leak-dst' but not \
             removed from 'workspace/leak-src' (CopyQ failed; the gateway's log has the details under ref ",
        )
        .and_then(|r| r.split_once("), so it is in both tabs now. The audit log keeps it as entry #"))
        .and_then(|(r, e)| Some((r.to_owned(), e.strip_suffix(", marked partial")?.to_owned())))
        .unwrap_or_else(|| panic!("{got}"));
    assert!(
        reference.len() == 6 && reference.chars().all(|c| c.is_ascii_hexdigit()),
        "{got}"
    );
    let mut log = String::new();
    if let Some(mut stderr) = gateway.stderr.take() {
        stderr.read_to_string(&mut log).expect("log");
    }
    let lines: Vec<&str> = log.lines().filter(|l| l.contains(&reference)).collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert!(
        lines[0].contains(" ERROR ") && lines[0].contains(LEAK),
        "{log}"
    );
    // The audit log keeps sizes, not contents: the entry says what the client was told.
    let store = copyq_mcp::store::Store::open(data.path()).expect("store");
    let entries = store.audit_since(0, 100).expect("audit");
    let kept = entries
        .iter()
        .find(|e| e.id.to_string() == entry)
        .unwrap_or_else(|| panic!("no entry #{entry}"));
    assert_eq!(kept.outcome, "partial");
    assert_eq!(
        kept.note,
        format!(
            "copied to the target, not removed from the source: CopyQ failed; the gateway's log has the \
             details under ref {reference}"
        )
    );
}
