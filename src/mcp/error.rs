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
    #[error("Invalid mode '{mode}' (expected one of: {})", expected.join(", "))]
    InvalidMode {
        mode: String,
        expected: &'static [&'static str],
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
    /// `COPYQ_ERROR`: the write **was partly made**: CopyQ changed as `made` says, then a step
    /// failed. The audit log keeps the entry (`entry`, when there is a log), marked partial.
    #[error("{}", partial_message(*made, from, to, cause, *entry))]
    Partial {
        made: Made,
        /// The tab written (a move's source) and a move's target, as the client named them.
        from: String,
        to: String,
        /// Why the step failed, as a client may be told it (see [`ToolError::partial`]): the
        /// gateway's own sentence, or a reference to CopyQ's words in the log.
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

impl ToolError {
    /// A write partly made (`made`) whose later step failed with `cause`, seen from the tab the
    /// client wrote (`from`) and a move's target (`to`). The cause is told as every backend
    /// failure is: CopyQ's own message (on the CLI backend, its stderr) logged under a reference
    /// the client gets, the gateway's own sentence as it is.
    pub fn partial(made: Made, from: &str, to: &str, cause: &BackendError) -> Self {
        let cause = match log_copyq_words(cause, "a write failed after changing CopyQ") {
            Some(reference) => {
                format!("CopyQ failed; the gateway's log has the details under ref {reference}")
            }
            None => {
                tracing::warn!(error = %field(&cause.to_string()), ?made, "a write failed after changing CopyQ");
                cause.to_string()
            }
        };
        Self::Partial {
            made,
            from: from.to_owned(),
            to: to.to_owned(),
            cause,
            entry: None,
        }
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
        match log_copyq_words(&e, "") {
            Some(reference) => Self::CopyQInternal { reference },
            None => {
                tracing::warn!(error = %field(&e.to_string()), "copyq call failed");
                Self::CopyQ(e.to_string())
            }
        }
    }
}

/// When `e` carries CopyQ's own message: that message logged (with `context`, when not empty)
/// under a new reference, which is returned. `None` for the gateway's own sentences.
fn log_copyq_words(e: &BackendError, context: &str) -> Option<String> {
    let (what, detail) = match e {
        BackendError::Failed(detail) => ("CopyQ failed", detail),
        BackendError::Unsupported(detail) => (
            "CopyQ's socket speaks a protocol this gateway does not know; use copyq.backend = \"cli\"",
            detail,
        ),
        _ => return None,
    };
    let reference = reference();
    if context.is_empty() {
        tracing::error!(%reference, detail = %field(detail), "{what}");
    } else {
        tracing::error!(%reference, detail = %field(detail), "{context}: {what}");
    }
    Some(reference)
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
mod tests;
