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

pub use catalog::{READ_TOOL, VALIDATE_TOOL, WRITE_TOOL};
pub use error::ToolError;
pub use server::CopyqMcp;

use crate::backend::Backend;
use crate::clipboard::Roots;

/// What every tool call needs: the backend, the clipboard rules, and the lock that orders CopyQ
/// access: reads share it; a write takes it alone, so writes never interleave with each other nor
/// with reads (a write ends by unloading its tab, which a concurrent multi-step read would see as
/// an empty tab).
#[derive(Debug)]
pub struct Tools {
    pub backend: Backend,
    pub roots: Roots,
    pub writes: tokio::sync::RwLock<()>,
    /// Where executed writes are recorded; `None` only in unit tests.
    pub audit: Option<std::sync::Arc<crate::store::Store>>,
    /// CopyQ's `maxitems`, cached while CopyQ's options file is unchanged.
    pub limit: LimitCache,
    /// What the read path masks (`[privacy]`); off unless [`Tools::with_privacy`] says otherwise.
    pub privacy: crate::privacy::Privacy,
}

/// Asking CopyQ for `maxitems` costs ~20 ms (it builds its settings dialog). CopyQ rewrites its
/// options file (`copyq[-session].ini`) the moment an option changes, so a value read while the
/// file had a given modification time and size stays true until either changes.
#[derive(Debug, Default)]
pub struct LimitCache {
    options_file: Option<std::path::PathBuf>,
    cached: std::sync::Mutex<Option<(FileStamp, usize)>>,
}

type FileStamp = (std::time::SystemTime, u64);

impl LimitCache {
    pub fn new(options_file: Option<std::path::PathBuf>) -> Self {
        Self {
            options_file,
            cached: std::sync::Mutex::new(None),
        }
    }

    /// The file's stamp now, if there is a file to watch.
    pub fn stamp(&self) -> Option<FileStamp> {
        let meta = std::fs::metadata(self.options_file.as_ref()?).ok()?;
        Some((meta.modified().ok()?, meta.len()))
    }

    /// The cached limit, if the file still has the stamp it had when the limit was read.
    pub fn get(&self, now: Option<FileStamp>) -> Option<usize> {
        let cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        match (*cached, now) {
            (Some((stamp, limit)), Some(now)) if stamp == now => Some(limit),
            _ => None,
        }
    }

    /// Remember `limit`, read after the file had `stamp`.
    pub fn put(&self, stamp: Option<FileStamp>, limit: usize) {
        if let Some(stamp) = stamp {
            *self.cached.lock().unwrap_or_else(|e| e.into_inner()) = Some((stamp, limit));
        }
    }
}

impl Tools {
    pub fn new(backend: Backend, roots: Roots) -> Self {
        Self {
            backend,
            roots,
            writes: tokio::sync::RwLock::new(()),
            audit: None,
            limit: LimitCache::default(),
            privacy: crate::privacy::Privacy::off(),
        }
    }

    pub fn with_privacy(mut self, privacy: crate::privacy::Privacy) -> Self {
        self.privacy = privacy;
        self
    }

    pub fn with_options_file(mut self, file: Option<std::path::PathBuf>) -> Self {
        self.limit = LimitCache::new(file);
        self
    }

    pub fn with_audit(mut self, store: std::sync::Arc<crate::store::Store>) -> Self {
        self.audit = Some(store);
        self
    }
}
