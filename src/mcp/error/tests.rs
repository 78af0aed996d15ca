//! The reply lines of tool errors, and what of a backend failure reaches a client or the log.

use super::*;

#[test]
fn lines_match_the_reference() {
    assert_eq!(
        ToolError::TabNotFound("nonexistent".into()).line(),
        "error|TAB_NOT_FOUND|Tab not found: nonexistent"
    );
    assert_eq!(
        ToolError::IndexOutOfBounds {
            index: 100,
            count: 47
        }
        .line(),
        "error|INDEX_OUT_OF_BOUNDS|Index 100 out of bounds (count: 47)"
    );
    assert_eq!(
        ToolError::MissingParam {
            param: "tab",
            mode: "list".into()
        }
        .line(),
        "error|MISSING_PARAM|Parameter 'tab' required for mode 'list'"
    );
    assert_eq!(
        ToolError::MatchNotFound("old text".into()).line(),
        "error|MATCH_NOT_FOUND|Match string not found: 'old text'"
    );
    assert_eq!(
        ToolError::PermissionDenied("Operation 'tab_create' not allowed on 'info/subtab'".into())
            .line(),
        "error|PERMISSION_DENIED|Operation 'tab_create' not allowed on 'info/subtab'"
    );
}

/// What `f` logged, as the gateway's log would show it (no colours).
fn logged<T>(f: impl FnOnce() -> T) -> (T, String) {
    let buffer = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_writer(move || Sink(sink.clone()))
        .finish();
    let out = tracing::subscriber::with_default(subscriber, f);
    let text = String::from_utf8_lossy(&buffer.lock().unwrap()).into_owned();
    (out, text)
}

struct Sink(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn copyq_s_own_messages_go_to_the_log_under_a_reference() {
    let failed = BackendError::Failed(
        "copyq exited with exit status: 1: ScriptError: x\nFORGED LINE".into(),
    );
    let (e, log) = logged(|| ToolError::from(failed));
    let ToolError::CopyQInternal { reference } = &e else {
        panic!("{e:?}");
    };
    assert_eq!(reference.len(), 6, "{reference}");
    assert!(
        reference.chars().all(|c| c.is_ascii_hexdigit()),
        "{reference}"
    );
    assert_eq!(
        e.line(),
        format!(
            "error|COPYQ_ERROR|CopyQ failed to answer (ref {reference}); the gateway's log has the details"
        )
    );
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(log.contains("ERROR"), "{log}");
    assert!(log.contains(&format!("reference={reference}")), "{log}");
    assert!(
        log.contains("detail=copyq exited with exit status: 1: ScriptError: x\\nFORGED LINE"),
        "{log}"
    );
}

/// A write partly made tells its cause as any backend failure is told: CopyQ's own message (on
/// the CLI backend, its stderr) in the log under a reference, the gateway's own sentence as it is.
#[test]
fn a_partial_write_s_cause_is_told_as_every_backend_failure_is() {
    let cause = BackendError::Failed("copyq exited with exit status: 1: secret 41f0".into());
    let (e, log) = logged(|| ToolError::partial(Made::Copy, "a", "b", &cause));
    let line = e.line();
    let reference = line
        .strip_prefix(
            "error|COPYQ_ERROR|This move was partly made: the item was copied to 'b' but not removed from 'a' \
             (CopyQ failed; the gateway's log has the details under ref ",
        )
        .and_then(|r| r.strip_suffix("), so it is in both tabs now"))
        .unwrap_or_else(|| panic!("{line}"));
    assert!(!line.contains("41f0"), "{line}");
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(log.contains(&format!("reference={reference}")), "{log}");
    assert!(
        log.contains("secret 41f0") && log.contains("ERROR"),
        "{log}"
    );
    let slow = BackendError::Timeout(std::time::Duration::from_secs(3));
    let (e, log) = logged(|| ToolError::partial(Made::Unknown, "a", "a", &slow));
    assert_eq!(
        e.line(),
        "error|COPYQ_ERROR|CopyQ stopped answering during this write to 'a' (CopyQ did not answer within 3s): it \
         may have been made, or may still be made when CopyQ answers. Read the tab before retrying"
    );
    assert!(log.contains("WARN") && !log.contains("reference="), "{log}");
}

#[test]
fn a_protocol_the_gateway_does_not_know_is_logged_not_sent() {
    let (e, log) = logged(|| ToolError::from(BackendError::Unsupported("slot 7".into())));
    assert!(matches!(e, ToolError::CopyQInternal { .. }), "{e:?}");
    assert!(!e.line().contains("slot 7"), "{}", e.line());
    assert!(log.contains("detail=slot 7"), "{log}");
    assert!(log.contains("use copyq.backend = \"cli\""), "{log}");
}

#[test]
fn references_differ_from_call_to_call() {
    let refs: std::collections::HashSet<String> = (0..20).map(|_| reference()).collect();
    assert!(refs.len() > 1, "{refs:?}");
}

#[test]
fn the_gateway_s_own_sentences_reach_the_client_as_they_are() {
    let (e, log) = logged(|| {
        ToolError::from(BackendError::Unreachable {
            target: "socket /run/x/copyq-s/.copyq-s_s".into(),
        })
    });
    assert_eq!(
        e.line(),
        "error|COPYQ_ERROR|CopyQ is not running or not reachable at socket /run/x/copyq-s/.copyq-s_s; start \
         the CopyQ server (`copyq &`) and retry, or run `copyq-mcp doctor` where the gateway runs to see what \
         it tried"
    );
    assert!(log.contains("WARN"), "{log}");
    let (e, _) = logged(|| {
        ToolError::from(BackendError::NotRunnable {
            command: "/nonexistent/copyq".into(),
            reason: "No such file or directory (os error 2)".into(),
        })
    });
    assert_eq!(
        e.line(),
        "error|COPYQ_ERROR|CopyQ failed: cannot run '/nonexistent/copyq': No such file or directory (os error 2)"
    );
}

#[test]
fn lines_stay_on_one_line() {
    assert_eq!(
        ToolError::TabNotFound("a\nb".into()).line(),
        "error|TAB_NOT_FOUND|Tab not found: a b"
    );
}
