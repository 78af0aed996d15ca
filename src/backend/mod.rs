//! The CopyQ backend: one small, data-shaped interface over the ways of reaching CopyQ. A read is
//! one `copyq` process on the CLI, and a few pipelined batches on the socket (the tab list, the
//! lengths, the rows: see `socket/backend/read.rs`); a durable write is several steps (save delays
//! zeroed, the change, the save, the delays put back: see [`protocol`]), one `copyq` process on
//! the CLI and about ten socket calls natively. Uses no other module of the crate: knows nothing
//! of HTTP, MCP or tokens.

mod auto;
mod cli;
pub mod content;
mod error;
mod item;
mod memory;
pub(crate) mod names;
mod options;
pub mod protocol;
pub mod socket;

use serde::Serialize;

pub use auto::AutoBackend;
pub(crate) use cli::exe::resolve as cli_program;
pub use cli::{CliBackend, CliConfig};
pub use error::{BackendError, Made};
pub(crate) use item::split_tags;
pub use item::{Item, Whole, holds_more, item_formats_only};
pub use memory::MemoryBackend;
pub use socket::backend::{SocketBackend, SocketConfig};

/// One insert of a group ([`Backend::insert_many`]): the tab, the item, CopyQ's `maxitems`.
pub type Insert<'a> = (&'a str, &'a Item, usize);

/// What a group's inserts wait for before anything changes: `true` once the group's audit entries
/// are on disk, `false` if they could not be recorded (then nothing may change). The socket
/// backend makes the steps that change nothing (the tab list, the unload that saves, the room
/// check) while it waits, so that the audit log's sync to disk and CopyQ's work overlap.
pub type Ready = std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send>>;

/// A [`Ready`] that is ready at once (no audit entries to wait for).
pub fn ready_now() -> Ready {
    Box::pin(std::future::ready(true))
}

/// The refusal of a write to `tab` that CopyQ would make in another existing tab of `all` (one
/// whose name differs only by `&`, see [`names::clash`]); `None` when it lands where it is asked.
pub(crate) fn clash(tab: &str, all: &[String]) -> Option<BackendError> {
    names::clash(tab, all).map(|other| BackendError::Clash {
        tab: tab.to_owned(),
        other: other.to_owned(),
    })
}

/// Wait for `ready`; an error if the write (or group) must not be made.
pub(crate) async fn wait_ready(ready: Ready) -> Result<(), BackendError> {
    match ready.await {
        true => Ok(()),
        false => Err(BackendError::Failed(
            "the write's audit entries were not recorded; nothing was changed".into(),
        )),
    }
}

/// `write` once `ready` says so: the CLI and in-memory backends have no step to make meanwhile.
async fn when_ready<T>(
    ready: Ready,
    write: impl std::future::Future<Output = Result<T, BackendError>>,
) -> Result<T, BackendError> {
    wait_ready(ready).await?;
    write.await
}

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

impl ReadRequest {
    /// The tab list alone: no tab is read (so none is named to CopyQ, nor created).
    pub fn tab_list() -> Self {
        Self {
            tabs: TabSelector::Names { names: Vec::new() },
            skip: 0,
            limit: Some(0),
            preview: None,
        }
    }
}

/// Rows of one tab to read again whole, by row number: what a listing asks for when a preview it
/// cut must be cut again from a masked whole text (see `mcp/read/cut.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TabRows {
    pub name: String,
    pub rows: Vec<usize>,
}

/// Rows of one tab read whole, as asked by a [`TabRows`]: the tab's length now, and each asked row
/// (`None`: past the tab's end now).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowsPage {
    pub name: String,
    pub total: usize,
    pub items: Vec<Option<Item>>,
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

/// What a read returns: the pages, and the names of all tabs (to see which tab CopyQ would take for
/// a missing one, see [`names`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub pages: Vec<TabPage>,
    pub all_tabs: Vec<String>,
}

/// How a write was made durable before it was acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Persisted {
    /// The tab was unloaded, which saves it at once.
    Unload,
    /// The tab is open in CopyQ's window: the save delays were zeroed around the write.
    SaveDelay,
    /// Nothing to persist (the in-memory backend).
    Memory,
}

/// Where an insert landed, and how it was made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Landed {
    pub persisted: Persisted,
    /// The item's row once inserted: 0, or the first row below those the owner pinned at the top
    /// of the tab (CopyQ keeps a pinned row where it is, see [`protocol::MIME_PINNED`]).
    pub row: usize,
}

/// What `/healthz` says of CopyQ, besides whether it answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Health {
    /// Whether CopyQ answered.
    #[serde(skip)]
    pub up: bool,
    /// The backend that serves calls now (`socket`, `cli`, `memory`); when CopyQ is down, the one
    /// that tried.
    pub backend: &'static str,
    /// CopyQ's version, when known: the CLI's `version()`. (No socket slot reports it.)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copyq_version: Option<String>,
    /// The socket layout detected (socket only), e.g. `Qt 6, CopyQ >= 14.0`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// When CopyQ does not answer: where it was looked for ([`Backend::target`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tried: Option<String>,
}

impl Health {
    pub fn down(backend: &'static str) -> Self {
        Self {
            up: false,
            backend,
            copyq_version: None,
            protocol: None,
            tried: None,
        }
    }
}

/// A write's first steps made before its plan ([`Backend::prepare_write`]), carried to the write.
#[derive(Debug, Default)]
pub struct Prepared(Option<socket::backend::Prepared>);

impl Prepared {
    /// Nothing made before: the write makes every step itself.
    pub fn none() -> Prepared {
        Prepared(None)
    }
}

/// The implementation chosen from configuration.
#[derive(Debug, Clone)]
pub enum Backend {
    Cli(CliBackend),
    Socket(SocketBackend),
    /// The socket when it can serve, else the CLI, decided per connection.
    Auto(AutoBackend),
    Memory(MemoryBackend),
}

/// Dispatch one operation to the implementation in use.
macro_rules! dispatch {
    ($self:ident, $method:ident($($arg:expr),*)) => {
        (match $self {
            Self::Cli(b) => b.$method($($arg),*).await,
            Self::Socket(b) => b.$method($($arg),*).await,
            Self::Auto(b) => b.$method($($arg),*).await,
            Self::Memory(b) => b.$method($($arg),*),
        })
        .map_err(|e| $self.locate(e))
    };
}

impl Backend {
    pub async fn read(&self, request: &ReadRequest) -> Result<Snapshot, BackendError> {
        dispatch!(self, read(request))
    }

    /// Rows of tabs, whole (uncut), in one read: one page per asked tab that exists, in the order
    /// asked (a missing tab is left out, and never created).
    pub async fn read_rows(&self, wanted: &[TabRows]) -> Result<Vec<RowsPage>, BackendError> {
        dispatch!(self, read_rows(wanted))
    }

    /// The bytes of one format of row `row` in the existing tab `tab` (`None`: the row or the
    /// format is not there). Only `item` asks, for the image it sends: reads never fetch images.
    pub async fn format(
        &self,
        tab: &str,
        row: usize,
        mime: &str,
    ) -> Result<Option<Vec<u8>>, BackendError> {
        dispatch!(self, format(tab, row, mime))
    }

    /// CopyQ's `maxitems`, asked of CopyQ only when not known (see `options::MaxItems`).
    pub async fn item_limit(&self) -> Result<usize, BackendError> {
        dispatch!(self, item_limit())
    }

    /// A read, and CopyQ's `maxitems` (the most items CopyQ keeps in a tab: past it, CopyQ drops
    /// the oldest), which a write that adds an item needs. The limit is cached while CopyQ's
    /// options file is unchanged (see [`options`]); when CopyQ must be asked, it is asked with the
    /// read (the CLI: in the same `copyq` process).
    pub async fn read_with_max_items(
        &self,
        request: &ReadRequest,
    ) -> Result<(Snapshot, usize), BackendError> {
        dispatch!(self, read_with_max_items(request))
    }

    /// Insert `item` at row 0 of `tab`, creating the tab if missing; refused when the tab holds
    /// `limit` items already.
    pub async fn insert(
        &self,
        tab: &str,
        item: &Item,
        limit: usize,
    ) -> Result<Landed, BackendError> {
        dispatch!(self, insert(tab, item, limit))
    }

    /// Group commit: each of `writes` inserted as [`Backend::insert`] would, with one save of
    /// each tab touched for the whole group (the socket backend; the others one after another),
    /// once `ready` says so (see [`Ready`]). `Err` when a step before any insert failed, or
    /// `ready` said no: nothing was changed.
    pub async fn insert_many(
        &self,
        writes: &[Insert<'_>],
        ready: Ready,
    ) -> Result<Vec<Result<Landed, BackendError>>, BackendError> {
        let results = match self {
            Self::Socket(b) => b.insert_many(writes, ready).await,
            Self::Auto(b) => b.insert_many(writes, ready).await,
            Self::Cli(b) => when_ready(ready, b.insert_many(writes)).await,
            Self::Memory(b) => when_ready(ready, async { b.insert_many(writes) }).await,
        };
        Ok(results
            .map_err(|e| self.locate(e))?
            .into_iter()
            .map(|r| r.map_err(|e| self.locate(e)))
            .collect())
    }

    /// Insert at row 0 of `tab` the item whose every format is `whole` (`item` is its text, tags
    /// and note, to verify it landed): a restore of a deleted screenshot. As [`Backend::insert`].
    /// Without the mark of a pinned item ([`protocol::MIME_PINNED`]): CopyQ would keep an item
    /// pinned before it in place above it, so a tab of pinned items restored from the bottom up
    /// came back out of order, and the restore failed halfway; items come back unpinned.
    pub async fn insert_whole(
        &self,
        tab: &str,
        item: &Item,
        whole: &Whole,
        limit: usize,
    ) -> Result<Landed, BackendError> {
        let unpinned: Whole;
        let whole = match whole.iter().any(|(mime, _)| mime == protocol::MIME_PINNED) {
            true => {
                unpinned = whole
                    .iter()
                    .filter(|(mime, _)| mime != protocol::MIME_PINNED)
                    .cloned()
                    .collect();
                &unpinned
            }
            false => whole,
        };
        dispatch!(self, insert_whole(tab, item, whole, limit))
    }

    /// Every format of `row` of `tab`, if it still holds `expect` (refused as a write's check
    /// is: no tab, no row, a conflict). Changes nothing.
    pub async fn every_format(
        &self,
        tab: &str,
        row: usize,
        expect: &Item,
    ) -> Result<Whole, BackendError> {
        dispatch!(self, every_format(tab, row, expect))
    }

    /// The first steps of a change, remove or move touching `tabs`, made before the write is
    /// planned, with the write lock held until it is made: the socket backend unloads (saves)
    /// those tabs here, so that the plan's read loads each once for the whole write (see
    /// `SocketBackend::prepare_write`). Changes nothing. The others do every step in the write.
    pub async fn prepare_write(&self, tabs: &[&str]) -> Result<Prepared, BackendError> {
        let prepared = match self {
            Self::Socket(b) => b.prepare_write(tabs).await.map(Some),
            Self::Auto(b) => b.prepare_write(tabs).await,
            Self::Cli(_) | Self::Memory(_) => Ok(None),
        };
        prepared.map(Prepared).map_err(|e| self.locate(e))
    }

    /// [`Self::prepare_write`] of `tabs` and [`Self::read`] of `request` (a write's plan), in
    /// one round trip fewer over the socket (see `SocketBackend::read_prepared`).
    pub async fn read_prepared(
        &self,
        request: &ReadRequest,
        tabs: &[&str],
    ) -> Result<(Snapshot, Prepared), BackendError> {
        let read = match self {
            Self::Socket(b) => b
                .read_prepared(request, tabs)
                .await
                .map(|(snap, p)| (snap, Some(p))),
            Self::Auto(b) => b.read_prepared(request, tabs).await,
            Self::Cli(_) | Self::Memory(_) => {
                return Ok((self.read(request).await?, Prepared::none()));
            }
        };
        read.map(|(snap, p)| (snap, Prepared(p)))
            .map_err(|e| self.locate(e))
    }

    /// Replace the text, tags and note of `row`, if it still holds `expect`. `prepared`: from
    /// [`Self::prepare_write`] for `[tab]`, or [`Prepared::none`]. Nothing changes before
    /// `ready` (the write's audit entry on disk); over the socket the row's check is made while
    /// it waits.
    pub async fn change(
        &self,
        tab: &str,
        row: usize,
        expect: &Item,
        item: &Item,
        (prepared, ready): (Prepared, Ready),
    ) -> Result<Persisted, BackendError> {
        let p = prepared.0;
        (match self {
            Self::Cli(b) => when_ready(ready, b.change(tab, row, expect, item)).await,
            Self::Socket(b) => b.change(tab, row, expect, item, (p, ready)).await,
            Self::Auto(b) => b.change(tab, row, expect, item, (p, ready)).await,
            Self::Memory(b) => when_ready(ready, async { b.change(tab, row, expect, item) }).await,
        })
        .map_err(|e| self.locate(e))
    }

    /// Remove `row`, if it still holds `expect`. `prepared` and `ready`: as [`Self::change`]'s.
    pub async fn remove(
        &self,
        tab: &str,
        row: usize,
        expect: &Item,
        (prepared, ready): (Prepared, Ready),
    ) -> Result<Persisted, BackendError> {
        let p = prepared.0;
        (match self {
            Self::Cli(b) => when_ready(ready, b.remove(tab, row, expect)).await,
            Self::Socket(b) => b.remove(tab, row, expect, (p, ready)).await,
            Self::Auto(b) => b.remove(tab, row, expect, (p, ready)).await,
            Self::Memory(b) => when_ready(ready, async { b.remove(tab, row, expect) }).await,
        })
        .map_err(|e| self.locate(e))
    }

    /// Move `row` of `from` (if it still holds `expect`) to row 0 of `to`: target written and
    /// checked first, source removed last, so the item is never in neither tab. `prepared`: from
    /// [`Self::prepare_write`] for `[to, from]`, or [`Prepared::none`].
    pub async fn move_item(
        &self,
        from: &str,
        row: usize,
        expect: &Item,
        to: &str,
        limit: usize,
        prepared: Prepared,
    ) -> Result<Landed, BackendError> {
        let p = prepared.0;
        (match self {
            Self::Cli(b) => b.move_item(from, row, expect, to, limit).await,
            Self::Socket(b) => b.move_item(from, row, expect, to, limit, p).await,
            Self::Auto(b) => b.move_item(from, row, expect, to, limit, p).await,
            Self::Memory(b) => b.move_item(from, row, expect, to, limit),
        })
        .map_err(|e| self.locate(e))
    }

    /// Create an empty tab; `false` when it already existed.
    pub async fn create_tab(&self, tab: &str) -> Result<bool, BackendError> {
        dispatch!(self, create_tab(tab))
    }

    /// Remove these tabs; the number of items they held.
    pub async fn remove_tabs(&self, tabs: &[String]) -> Result<usize, BackendError> {
        dispatch!(self, remove_tabs(tabs))
    }

    /// Whether CopyQ answers at all.
    pub async fn ping(&self) -> Result<(), BackendError> {
        dispatch!(self, ping())
    }

    /// The backend serving calls now: `cli`, `socket` or `memory`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Cli(_) => "cli",
            Self::Socket(_) => "socket",
            Self::Auto(b) => b.current(),
            Self::Memory(_) => "memory",
        }
    }

    /// Where CopyQ is looked for: the socket path, or the `copyq` command with its session.
    pub fn target(&self) -> String {
        match self {
            Self::Cli(b) => b.target(),
            Self::Socket(b) => b.target(),
            Self::Auto(b) => b.target(),
            Self::Memory(_) => "memory".to_owned(),
        }
    }

    /// CopyQ out of reach, said with where it was looked for.
    fn locate(&self, e: BackendError) -> BackendError {
        match e {
            BackendError::Unavailable => BackendError::Unreachable {
                target: self.target(),
            },
            e => e,
        }
    }

    /// Whether CopyQ answers, through which backend, and what is known of its version (and,
    /// when it does not, where it was looked for).
    pub async fn health(&self) -> Health {
        let mut health = self.health_of().await;
        if !health.up {
            health.tried = Some(self.target());
        }
        health
    }

    async fn health_of(&self) -> Health {
        match self {
            Self::Cli(b) => b.health().await,
            Self::Socket(b) => b.health().await,
            Self::Auto(b) => b.health().await,
            Self::Memory(_) => Health {
                up: true,
                backend: "memory",
                copyq_version: None,
                protocol: None,
                tried: None,
            },
        }
    }
}
