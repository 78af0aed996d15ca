//! How a backend call fails: a refusal that protects data, CopyQ out of reach or not
//! understood, or a write that was partly made (and what it had changed by then).

use std::time::Duration;

use thiserror::Error;

/// What a write had changed in CopyQ when a later step of it failed (see [`BackendError::Partial`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Made {
    /// The write itself was made; a step after it (putting the save delays back, saving the
    /// touched tabs) failed, so CopyQ may not have saved it yet, or keeps its save delays at 0.
    Change,
    /// A move wrote the item into its target tab (saved), but did not remove it from its source.
    Copy,
    /// CopyQ stopped answering during the write: what was sent may still be made when it answers.
    Unknown,
}

/// A failure to reach CopyQ, a refusal that protects data, or an answer not understood.
#[derive(Debug, Error)]
pub enum BackendError {
    /// The tab does not exist (any more).
    #[error("tab not found")]
    NoSuchTab,
    /// The row does not exist (any more).
    #[error("row out of range (count: {count})")]
    NoSuchRow { count: usize },
    /// The row no longer holds the item the write was planned against (indices shifted).
    #[error("the item changed since it was read")]
    Conflict,
    /// The tab holds `limit` items: one more would make CopyQ silently drop the oldest.
    #[error("tab is full ({limit} items)")]
    TabFull { limit: usize },
    /// CopyQ is not running or its socket is unreachable.
    #[error("CopyQ is not running or not reachable; start the CopyQ server (`copyq &`) and retry")]
    Unavailable,
    /// [`Self::Unavailable`] as [`super::Backend`] reports it: with where it looked (`target`: the
    /// socket path, or the `copyq` command, session and settings path), since a CopyQ running
    /// under another session or settings path is the usual cause.
    #[error(
        "CopyQ is not running or not reachable at {target}; start the CopyQ server (`copyq &`) and retry, or run \
         `copyq-mcp doctor` where the gateway runs to see what it tried"
    )]
    Unreachable { target: String },
    /// CopyQ took longer than the configured timeout.
    #[error("CopyQ did not answer within {0:?}")]
    Timeout(Duration),
    /// The write went to another tab than `tab`: it did not exist, and CopyQ took an existing tab
    /// whose name differs only by `&` (see [`super::names`]). Unlike the other refusals, **the write was
    /// made**, in that other tab.
    #[error("the write to tab '{tab}' went to another tab CopyQ matched to that name")]
    Misdirected { tab: String },
    /// An add to `tab` refused before anything was written: it does not exist, and CopyQ would
    /// take `other`, an existing tab whose name differs only by `&`, for it. Found by the group
    /// of adds with the tab list it asks under the write lock ([`super::Backend::insert_many`]).
    #[error("tab '{tab}' does not exist, and CopyQ would take its existing tab '{other}' for it")]
    Clash { tab: String, other: String },
    /// CopyQ's socket answers in a layout this gateway does not know (a future CopyQ): the
    /// `auto` backend serves through the CLI instead.
    #[error(
        "CopyQ's socket speaks a protocol this gateway does not know ({0}); use copyq.backend = \"cli\""
    )]
    Unsupported(String),
    /// The `copyq` command could not be started (the CLI backend): the gateway's own words, with
    /// the system's reason.
    #[error("CopyQ failed: cannot run '{command}': {reason}")]
    NotRunnable { command: String, reason: String },
    /// CopyQ answered, but with an error or something unexpected. The text is CopyQ's own (its
    /// stderr, a script exception, a reply the decoder refused): it goes to the log, never to a
    /// client (see `ToolError`'s `From<BackendError>`).
    #[error("CopyQ failed: {0}")]
    Failed(String),
    /// CopyQ answered a removal and kept the row: from CopyQ 8.0 an `onItemsRemoved()` script
    /// (the owner's) may refuse a removal, and CopyQ then says nothing. Nothing was changed.
    #[error("CopyQ kept the row it was asked to remove")]
    Kept,
    /// The row is pinned in CopyQ (see [`super::protocol::MIME_PINNED`]): CopyQ refuses to remove
    /// it, so a delete or move of it is refused before anything changes.
    #[error("the row is pinned in CopyQ")]
    Pinned,
    /// The write was partly made: CopyQ changed as `made` says, then `cause` failed. Like
    /// `Misdirected`, and unlike the other errors, something was changed.
    #[error("{cause}")]
    Partial {
        made: Made,
        cause: Box<BackendError>,
    },
}

impl BackendError {
    /// `cause`, after `made` was done; a cause that was itself partial keeps what it says.
    /// This error once more, for each write of a group that a step they share failed (the kinds a
    /// call to CopyQ fails with as they are; another kind in its words).
    pub fn again(&self) -> Self {
        match self {
            Self::Unavailable => Self::Unavailable,
            Self::Unreachable { target } => Self::Unreachable {
                target: target.clone(),
            },
            Self::Timeout(d) => Self::Timeout(*d),
            Self::Unsupported(why) => Self::Unsupported(why.clone()),
            Self::Failed(text) => Self::Failed(text.clone()),
            Self::Partial { made, cause } => Self::Partial {
                made: *made,
                cause: Box::new(cause.again()),
            },
            other => Self::Failed(other.to_string()),
        }
    }

    pub fn after(made: Made, cause: BackendError) -> Self {
        match cause {
            partial @ Self::Partial { .. } => partial,
            cause => Self::Partial {
                made,
                cause: Box::new(cause),
            },
        }
    }
}
