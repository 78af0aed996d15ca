//! The CopyQ backend: one small, data-shaped interface over the ways of reaching CopyQ. Each operation
//! is one round trip. Knows nothing of HTTP, MCP or tokens.

mod cli;
mod item;
mod memory;

use std::time::Duration;

use serde::Serialize;
use thiserror::Error;

pub use cli::{CliBackend, CliConfig};
pub use item::{Item, join_tags, split_tags};
pub use memory::MemoryBackend;

/// Which tabs a read covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum TabSelector {
    /// These tabs, where they exist; a missing tab is left out (and never created).
    Names { names: Vec<String> },
    /// Every tab whose name starts with `prefix` (or, with `invert`, does not).
    Prefix { prefix: String, invert: bool },
    /// Every tab.
    All {},
}

/// A read of a window of rows from each selected tab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadRequest {
    #[serde(flatten)]
    pub tabs: TabSelector,
    /// First row of the window.
    pub skip: usize,
    /// Rows in the window; `None` reads to the end of each tab.
    pub limit: Option<usize>,
    /// Cut text and notes to this many UTF-16 units (enough for a preview); `None` keeps them whole.
    pub preview: Option<usize>,
}

/// The rows read from one tab, in CopyQ's tab order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabPage {
    pub name: String,
    /// Rows in the whole tab.
    pub total: usize,
    /// Rows `skip..` of the window.
    pub items: Vec<Item>,
}

/// A failure to reach CopyQ or to understand it. The client sees `error|COPYQ_ERROR|<message>`.
#[derive(Debug, Error)]
pub enum BackendError {
    /// CopyQ is not running or its socket is unreachable.
    #[error("CopyQ is not running or not reachable; start the CopyQ server (`copyq &`) and retry")]
    Unavailable,
    /// CopyQ took longer than the configured timeout.
    #[error("CopyQ did not answer within {0:?}")]
    Timeout(Duration),
    /// CopyQ answered, but with an error or something unexpected.
    #[error("CopyQ failed: {0}")]
    Failed(String),
}

/// The implementation chosen from configuration.
#[derive(Debug, Clone)]
pub enum Backend {
    Cli(CliBackend),
    Memory(MemoryBackend),
}

impl Backend {
    pub async fn read(&self, request: &ReadRequest) -> Result<Vec<TabPage>, BackendError> {
        match self {
            Self::Cli(b) => b.read(request).await,
            Self::Memory(b) => Ok(b.read(request)),
        }
    }

    /// Whether CopyQ answers at all.
    pub async fn ping(&self) -> Result<(), BackendError> {
        match self {
            Self::Cli(b) => b.ping().await,
            Self::Memory(_) => Ok(()),
        }
    }
}
