//! The MCP surface: the server handler, one module per tool, argument parsing and the reply format.
//! Tools turn arguments into typed queries, call the backend and format the reply; they parse no
//! HTTP and check no token. The handler takes the [`Principal`](crate::auth::Principal) the bearer
//! check put on the request: its role decides which tools exist, its tabs what a call may see or
//! change, its subject goes in the audit log (written through [`crate::store`]).

mod args;
mod catalog;
mod chatgpt;
mod error;
mod format;
mod mask;
mod presentation;
mod protocol;
mod read;
mod resources;
mod server;
mod structured;
mod validate;
mod write;

pub use error::ToolError;
pub use read::image::{ImageLimits, ImagePolicy};
pub use server::CopyqMcp;

use crate::backend::Backend;
use crate::clipboard::Roots;

/// What every tool call needs: the backend, the clipboard rules, and the locks that order CopyQ
/// access (see [`ToolState::read_lock`]).
#[derive(Debug)]
pub struct ToolState {
    pub backend: Backend,
    pub roots: Roots,
    /// The write lock: a write takes it alone, so writes never interleave with each other,
    /// except updates and deletes over the socket, which share it and go beside each other one
    /// tab at a time ([`ToolState::beside`]). Searches, and every read through the CLI, share it
    /// (a whole-tab selection, emptied by a write's unload mid-read, misses items: read again
    /// over the socket, unseen by the CLI).
    pub writes: std::sync::Arc<tokio::sync::RwLock<()>>,
    /// The unload lock: updates and deletes going beside each other share it (each unloads its
    /// tab), a search's read of CopyQ takes it alone (see [`ToolState::whole_read`]).
    pub(crate) unloads: std::sync::Arc<tokio::sync::RwLock<()>>,
    /// One lock a tab for the updates and deletes that go beside each other.
    pub(crate) tab_writes: TabLocks,
    /// The tab-list lock: a write that removes or creates a tab takes it alone (after the write
    /// lock); trees, lists and items over the socket share it, and go beside the other writes.
    pub tab_list: std::sync::Arc<tokio::sync::RwLock<()>>,
    /// Adds waiting to be made as one group ([`write`]'s group commit).
    pub(crate) adds: write::Queue,
    /// Where executed writes are recorded; `None` only in unit tests.
    pub audit: Option<std::sync::Arc<crate::store::Store>>,
    /// What the read path masks (`[privacy]`); off unless [`ToolState::with_privacy`] says otherwise.
    pub privacy: crate::privacy::Privacy,
    /// The key of the versions of items holding a mask ([`mask::version`]): random per process,
    /// so such a version read before a restart is refused after it (read again).
    pub version_key: [u8; 32],
    /// Prometheus metrics (`[metrics] enabled`): tool calls here, HTTP requests in `http`.
    pub metrics: Option<std::sync::Arc<crate::metrics::Metrics>>,
    /// Which optional MCP surfaces are on (`[mcp]`).
    pub surface: crate::config::McpSettings,
    /// Which images `mcp_read item` sends, and how large (`[images]`, `privacy.external_images`).
    pub images: read::image::ImagePolicy,
    /// The live resource subscriptions (`resources::watch`), bounded per token.
    pub watches: resources::Registry,
    /// Searches that may hold a whole scope's items at once ([`WHOLE_READS`]).
    pub(crate) whole_reads: std::sync::Arc<tokio::sync::Semaphore>,
    /// What the last searches' queries ask of an item before masking it.
    pub(crate) search_gates: read::GatesKept,
    /// Searches' whole-scope reads, one for all those waiting together.
    pub(crate) together: read::Together,
}

/// How many searches hold their whole scope's items at once, to mask and match them; the others
/// wait their turn. Their reads of CopyQ go one at a time, shared by the searches waiting together
/// (`read::together`), so two turns keep CopyQ and the gateway both busy (one read served while
/// another search matches); each more only held one more copy of 10,000 items in memory while it
/// waited (the 64-client step of the memory bench, `bench/results.md`).
pub const WHOLE_READS: usize = 2;

/// A tool's reply: its text, and the images sent beside it (MIME type, bytes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reply {
    pub text: String,
    pub images: Vec<(String, Vec<u8>)>,
}

impl From<String> for Reply {
    fn from(text: String) -> Self {
        Self {
            text,
            images: Vec::new(),
        }
    }
}

impl Reply {
    /// The images as MCP sends them: MIME type and base64 (tool results and resource reads).
    pub fn images_base64(&self) -> impl Iterator<Item = (&str, String)> {
        use base64::Engine as _;
        self.images.iter().map(|(mime, data)| {
            let b64 = base64::engine::general_purpose::STANDARD.encode(data);
            (mime.as_str(), b64)
        })
    }

    /// The MCP content of a successful result: the text, then each image.
    pub fn blocks(self) -> Vec<rmcp::model::ContentBlock> {
        let images: Vec<_> = self
            .images_base64()
            .map(|(mime, data)| rmcp::model::ContentBlock::image(data, mime))
            .collect();
        std::iter::once(rmcp::model::ContentBlock::text(self.text))
            .chain(images)
            .collect()
    }
}

/// 32 random bytes; if the system cannot give them (it always can where the gateway runs), a key
/// from the clock and the process: versions stay keyed, only less unpredictable.
fn random_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    if getrandom::fill(&mut key).is_err() {
        use sha2::Digest;
        let seed = format!("{:?}{}", std::time::SystemTime::now(), std::process::id());
        key = sha2::Sha256::digest(seed.as_bytes()).into();
    }
    key
}

/// The locks of the updates and deletes that go beside each other, one a tab: a fixed number,
/// each tab's by a hash of its name keyed per process (no map growing with the tabs named).
/// Two tabs that share a lock only wait for each other, as every write did before.
#[derive(Debug)]
pub(crate) struct TabLocks {
    locks: Vec<std::sync::Arc<tokio::sync::Mutex<()>>>,
    hasher: std::collections::hash_map::RandomState,
}

impl Default for TabLocks {
    fn default() -> Self {
        Self {
            locks: (0..TAB_LOCKS).map(|_| Default::default()).collect(),
            hasher: Default::default(),
        }
    }
}

/// How many tab locks [`TabLocks`] holds: far more than the writers that wait at once.
const TAB_LOCKS: usize = 64;

impl TabLocks {
    fn of(&self, tab: &str) -> std::sync::Arc<tokio::sync::Mutex<()>> {
        use std::hash::BuildHasher as _;
        let at = usize::try_from(self.hasher.hash_one(tab) % TAB_LOCKS as u64).unwrap_or(0);
        self.locks[at].clone()
    }
}

/// What an update or delete going beside the others holds ([`ToolState::beside`]).
pub(crate) type BesideGuard = (
    tokio::sync::OwnedRwLockReadGuard<()>,
    tokio::sync::OwnedRwLockReadGuard<()>,
    tokio::sync::OwnedMutexGuard<()>,
);

/// What a read holds while it reads ([`ToolState::read_lock`]).
pub(crate) type ReadGuard = tokio::sync::OwnedRwLockReadGuard<()>;

impl ToolState {
    /// The lock an `mcp_read` holds. Over the socket, a tree, list or item holds the tab-list
    /// lock only: it goes beside adds, updates, deletes and moves (CopyQ idled between a write's
    /// round trips while every read waited, bench/results.md "Issue 22 item 5, stop 51"). Such a
    /// read may see a write half made, as it may see the owner's; what it cannot do is name a tab
    /// a write removes between its tab list and its next call, which would make CopyQ create the
    /// tab again: tab removals and creations take the tab-list lock alone. (A tab the owner
    /// removes is another matter: a read that named it in the batch of its tab list removes
    /// the tab CopyQ made again, `SocketBackend::read_guessed`.) A `whole` read (a
    /// search: every row of every tab, through selections) waits for writes as before: a write's
    /// unload empties a selection mid-read, and reading such tabs again row by row cost CopyQ more
    /// than the reads beside writes saved (the same section). It holds the lock for its read of
    /// CopyQ alone: its masking and matching go beside the writes after it (`read::tabs`'s
    /// `scan_whole`). Through the CLI, or the memory backend, every read waits for writes.
    pub(crate) async fn read_lock(&self, whole: bool) -> ReadGuard {
        match self.backend.name() {
            "socket" if !whole => self.tab_list.clone().read_owned().await,
            _ => self.writes.clone().read_owned().await,
        }
    }

    /// Whether updates and deletes go beside each other ([`ToolState::beside`]): over the socket
    /// only. Through the CLI each write is a `copyq` process that zeroes and puts back the save
    /// delays on its own, which two at once would leave at 0; the memory backend keeps the unit
    /// tests' writes one at a time, as they were written for.
    pub(crate) fn writes_beside(&self) -> bool {
        self.backend.name() == "socket"
    }

    /// The locks of an update or delete of `tab` going beside other writes: the write lock
    /// shared (adds, moves and tab changes still go alone), the unload lock shared (no search
    /// reads CopyQ meanwhile: the write's unload would empty its selection), and `tab`'s own
    /// (two writes of one tab go one after the other, each planned against the other's result).
    /// Taken in this order by every writer, so none waits holding a lock another needs first.
    /// CopyQ serves one call at a time: what goes beside is one write's round trips in another's
    /// waits (bench/results.md, "Issue 22, stop 56").
    pub(crate) async fn beside(&self, tab: &str) -> BesideGuard {
        let shared = self.writes.clone().read_owned().await;
        let unloading = self.unloads.clone().read_owned().await;
        let own = self.tab_writes.of(tab).lock_owned().await;
        (shared, unloading, own)
    }

    /// A search's read of CopyQ, `read`, with the unload lock alone: no update or delete going
    /// beside the others unloads a tab meanwhile (see [`ToolState::beside`]).
    pub(crate) async fn whole_read<T>(&self, read: impl std::future::Future<Output = T>) -> T {
        let _alone = self.unloads.write().await;
        read.await
    }

    pub fn new(backend: Backend, roots: Roots) -> Self {
        Self {
            backend,
            roots,
            writes: std::sync::Arc::new(tokio::sync::RwLock::new(())),
            unloads: std::sync::Arc::new(tokio::sync::RwLock::new(())),
            tab_writes: TabLocks::default(),
            tab_list: std::sync::Arc::new(tokio::sync::RwLock::new(())),
            adds: write::Queue::default(),
            audit: None,
            privacy: crate::privacy::Privacy::off(),
            version_key: random_key(),
            metrics: None,
            surface: crate::config::McpSettings::default(),
            images: read::image::ImagePolicy::default(),
            watches: Default::default(),
            whole_reads: std::sync::Arc::new(tokio::sync::Semaphore::new(WHOLE_READS)),
            search_gates: Default::default(),
            together: Default::default(),
        }
    }

    pub fn with_images(mut self, images: read::image::ImagePolicy) -> Self {
        self.images = images;
        self
    }

    pub fn with_metrics(mut self, enabled: bool) -> Self {
        self.metrics = enabled.then(|| std::sync::Arc::new(crate::metrics::Metrics::new()));
        self
    }

    pub fn with_surface(mut self, surface: crate::config::McpSettings) -> Self {
        self.surface = surface;
        self
    }

    pub fn with_privacy(mut self, privacy: crate::privacy::Privacy) -> Self {
        self.privacy = privacy;
        // Gates are the mode's: none kept from another.
        self.search_gates = Default::default();
        self
    }

    pub fn with_audit(mut self, store: std::sync::Arc<crate::store::Store>) -> Self {
        self.audit = Some(store);
        self
    }
}
