//! The MCP surface: the server handler, one module per tool, argument parsing and the reply format.
//! Tools turn arguments into typed queries, call the backend and format the reply; they never see
//! HTTP or tokens, only the caller's [`Role`](crate::auth::Role).

mod args;
mod catalog;
mod error;
mod format;
mod read;
mod server;
mod validate;
mod write;

pub use error::ToolError;
pub use server::CopyqMcp;

use crate::backend::Backend;
use crate::clipboard::Roots;

/// What every tool call needs: the backend, the clipboard rules, and the lock that orders CopyQ
/// access: reads share it; a write takes it alone, so writes never interleave with each other nor
/// with reads (a write ends by unloading its tab, which a concurrent multi-step read would see as
/// an empty tab).
#[derive(Debug)]
pub struct ToolState {
    pub backend: Backend,
    pub roots: Roots,
    pub writes: std::sync::Arc<tokio::sync::RwLock<()>>,
    /// Where executed writes are recorded; `None` only in unit tests.
    pub audit: Option<std::sync::Arc<crate::store::Store>>,
    /// What the read path masks (`[privacy]`); off unless [`ToolState::with_privacy`] says otherwise.
    pub privacy: crate::privacy::Privacy,
    /// Prometheus metrics (`[metrics] enabled`): tool calls here, HTTP requests in `http`.
    pub metrics: Option<std::sync::Arc<crate::metrics::Metrics>>,
}

impl ToolState {
    pub fn new(backend: Backend, roots: Roots) -> Self {
        Self {
            backend,
            roots,
            writes: std::sync::Arc::new(tokio::sync::RwLock::new(())),
            audit: None,
            privacy: crate::privacy::Privacy::off(),
            metrics: None,
        }
    }

    pub fn with_metrics(mut self, enabled: bool) -> Self {
        self.metrics = enabled.then(|| std::sync::Arc::new(crate::metrics::Metrics::new()));
        self
    }

    pub fn with_privacy(mut self, privacy: crate::privacy::Privacy) -> Self {
        self.privacy = privacy;
        self
    }

    pub fn with_audit(mut self, store: std::sync::Arc<crate::store::Store>) -> Self {
        self.audit = Some(store);
        self
    }
}
