//! Tool failures as the reference names them. Each becomes a tool result with `isError: true` whose
//! text is `error|CODE|message`; this is the one place that wording is decided.

use thiserror::Error;

use crate::backend::{BackendError, Made};
use crate::clipboard::PathError;
use crate::logging::field;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ToolError {
    /// `TAB_NOT_FOUND`: the tab does not exist (reads never create it).
    #[error("Tab not found: {0}")]
    TabNotFound(String),
    /// `TAB_NOT_FOUND`: no managed tab of that name, but an external tab of exactly that name
    /// exists, and `scope` was left at `mcp`. The reference fixes only the missing tab's words,
    /// which this keeps as its start.
    #[error(
        "Tab not found: {0} (under mcp/; an external tab '{0}' exists: pass scope: \"external\" or \"all\" to read it)"
    )]
    TabNotFoundExternal(String),
    /// `INDEX_OUT_OF_BOUNDS`: index < 0 or >= count.
    #[error("Index {index} out of bounds (count: {count})")]
    IndexOutOfBounds { index: i64, count: usize },
    /// `INVALID_MODE`: mode not one the tool knows.
    #[error("Invalid mode '{mode}' (expected one of: {expected})")]
    InvalidMode {
        mode: String,
        expected: &'static str,
    },
    /// `INVALID_PARAM`: a parameter with a wrong type, range or value.
    #[error("{0}")]
    InvalidParam(String),
    /// `PERMISSION_DENIED`: a write outside the writable area.
    #[error("{0}")]
    PermissionDenied(String),
    /// `PERMISSION_DENIED`: the write **was made**, but CopyQ made it in another tab than `tab`
    /// (`landed`, when known: a tab whose name differs only by `&`, created after the write was
    /// planned). The audit log keeps the entry.
    #[error(
        "CopyQ made this write in {} instead of '{tab}' (CopyQ ignores '&' in tab names, and that tab appeared \
         after the write was planned): the change was made there, not in '{tab}'",
        landed.as_ref().map_or("another tab".to_owned(), |t| format!("its tab '{t}'"))
    )]
    Misdirected { tab: String, landed: Option<String> },
    /// `MISSING_PARAM`: a parameter the mode requires is absent.
    #[error("{}", missing_message(param, mode))]
    MissingParam { param: &'static str, mode: String },
    /// `MATCH_NOT_FOUND`: `substitute` found nothing to replace.
    #[error("Match string not found: '{0}'")]
    MatchNotFound(String),
    /// `VERSION_MISMATCH`: (opt-in `expected_version`) the item at that index is not the one the
    /// agent read: indices shift as items are added and removed.
    #[error(
        "Item {index} of '{tab}' is not the version you read (expected {expected}, found {found}): indices shift \
         as items are added or removed; nothing was changed. Read the tab again"
    )]
    VersionMismatch {
        tab: String,
        index: i64,
        expected: String,
        found: String,
    },
    /// `COPYQ_ERROR`: the write **was partly made**: CopyQ changed as `made` says, then `cause`
    /// failed. The audit log keeps the entry (`entry`, when there is a log), marked partial.
    #[error("{}", partial_message(*made, from, to, cause, *entry))]
    Partial {
        made: Made,
        /// The tab written (a move's source) and a move's target, as the client named them.
        from: String,
        to: String,
        cause: String,
        entry: Option<i64>,
    },
    /// `COPYQ_ERROR`: CopyQ is unreachable or slow, or a refusal the gateway words itself.
    #[error("{0}")]
    CopyQ(String),
    /// `COPYQ_ERROR`: CopyQ failed with a message of its own (stderr, a script exception, a reply
    /// the decoder refused). The client gets this fixed sentence; the message is in the log under
    /// `reference`.
    #[error("CopyQ failed to answer (ref {reference}); the gateway's log has the details")]
    CopyQInternal { reference: String },
}

fn partial_message(made: Made, from: &str, to: &str, cause: &str, entry: Option<i64>) -> String {
    let said = match made {
        Made::Copy => format!(
            "This move was partly made: the item was copied to '{to}' but not removed from '{from}' ({cause}), \
             so it is in both tabs now"
        ),
        Made::Change => format!(
            "This write was made in '{from}', but a step after it failed ({cause}): CopyQ may not have saved it \
             yet, or may keep its save delays at 0"
        ),
        Made::Unknown => format!(
            "CopyQ stopped answering during this write to '{from}' ({cause}): it may have been made, or may \
             still be made when CopyQ answers. Read the tab before retrying"
        ),
    };
    match entry {
        Some(id) => format!("{said}. The audit log keeps it as entry #{id}, marked partial"),
        None => said,
    }
}

fn missing_message(param: &str, mode: &str) -> String {
    if mode.is_empty() {
        format!("Parameter '{param}' required")
    } else {
        format!("Parameter '{param}' required for mode '{mode}'")
    }
}

impl ToolError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::TabNotFound(_) | Self::TabNotFoundExternal(_) => "TAB_NOT_FOUND",
            Self::IndexOutOfBounds { .. } => "INDEX_OUT_OF_BOUNDS",
            Self::InvalidMode { .. } => "INVALID_MODE",
            Self::InvalidParam(_) => "INVALID_PARAM",
            Self::PermissionDenied(_) | Self::Misdirected { .. } => "PERMISSION_DENIED",
            Self::MissingParam { .. } => "MISSING_PARAM",
            Self::MatchNotFound(_) => "MATCH_NOT_FOUND",
            Self::VersionMismatch { .. } => "VERSION_MISMATCH",
            Self::Partial { .. } | Self::CopyQ(_) | Self::CopyQInternal { .. } => "COPYQ_ERROR",
        }
    }

    /// The reply line: `error|CODE|message`, kept on one line.
    pub fn line(&self) -> String {
        let message = crate::clipboard::flatten(&self.to_string());
        format!("error|{}|{}", self.code(), message)
    }
}

impl From<PathError> for ToolError {
    fn from(e: PathError) -> Self {
        match e {
            PathError::Invalid(m) => Self::InvalidParam(m),
            PathError::NotWritable(m) => Self::PermissionDenied(m),
        }
    }
}

/// The one place a backend failure becomes what the client sees. CopyQ's own messages are logged
/// here, once, bounded and escaped (stderr may echo clipboard contents), under a short reference
/// the client's sentence carries; the gateway's own sentences reach the client as they are.
impl From<BackendError> for ToolError {
    fn from(e: BackendError) -> Self {
        let (what, detail) = match &e {
            BackendError::Failed(detail) => ("CopyQ failed", detail),
            BackendError::Unsupported(detail) => (
                "CopyQ's socket speaks a protocol this gateway does not know; use copyq.backend = \"cli\"",
                detail,
            ),
            _ => {
                tracing::warn!(error = %field(&e.to_string()), "copyq call failed");
                return Self::CopyQ(e.to_string());
            }
        };
        let reference = reference();
        tracing::error!(%reference, detail = %field(detail), "{what}");
        Self::CopyQInternal { reference }
    }
}

/// Six hex digits, enough to find one failure in a day's log.
fn reference() -> String {
    let mut bytes = [0u8; 3];
    if getrandom::fill(&mut bytes).is_err() {
        // No entropy source: a reference that is merely unlikely to repeat still finds the line.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        bytes.copy_from_slice(&nanos.to_le_bytes()[..3]);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
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
            ToolError::PermissionDenied(
                "Operation 'tab_create' not allowed on 'info/subtab'".into()
            )
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
}
