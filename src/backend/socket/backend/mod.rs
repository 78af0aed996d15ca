//! CopyQ through its local socket, natively: the same operations and results as the CLI backend,
//! each in a few pipelined round trips instead of a `copyq` process. One warm connection, re-made
//! after CopyQ restarts; the server's layout is detected on every connect, so a CopyQ upgraded
//! under a running gateway (Qt 5 to Qt 6, 6.4 to 17.0) is spoken to in its own layout.

mod content;
mod data_file;
mod durable;
mod group;
mod read;
mod rows;
mod whole;
mod write;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;

use super::client::{Client, Options, Sent};
use super::probe::{Detected, Layout, detect};
use super::slots;
use super::value::{Call, Map, Value, map_get};
use super::{MAX_FRAME_LEN, SocketError};
use crate::backend::{BackendError, Item, split_tags};

pub use crate::backend::protocol::{MIME_NOTE, MIME_PASSWORD_HINT, MIME_TAGS, MIME_TEXT};
pub use durable::Prepared;

#[derive(Debug, Clone)]
pub struct SocketConfig {
    pub path: PathBuf,
    /// Bound on one operation (all its round trips).
    pub timeout: Duration,
}

/// The live connection and the layout its server speaks.
type Connection = Option<(Arc<Client>, Layout)>;

#[derive(Debug, Clone)]
pub struct SocketBackend {
    config: Arc<SocketConfig>,
    conn: Arc<Mutex<Connection>>,
    /// `maxitems`, cached while the options file beside the socket is unchanged.
    limit: Arc<crate::backend::options::MaxItems>,
    /// Save delays a write zeroed and could not put back (CopyQ gone meanwhile): put back before
    /// the next read or write.
    owed: Arc<std::sync::Mutex<Option<Vec<String>>>>,
    /// Held from reading the save delays to putting them back (a write to a pinned tab, and
    /// `save_loaded`), where writes may go beside each other (updates and deletes,
    /// `ToolState::beside`): two such cycles at once, the second would read the first's zeros as
    /// the owner's delays and put those back. (A group of adds goes alone: its cycle needs none.)
    delays: Arc<tokio::sync::Mutex<()>>,
    /// Held around each removal of rows, and each change of options: one at a time. CopyQ may
    /// run an `onItemsRemoved()` script before a removal and wait for it in a nested event loop,
    /// which serves the calls sent meanwhile: a second removal there nests another, and past
    /// CopyQ's limit on nested handlers a removal is cancelled; an option changed there reloads
    /// every tab, the one being removed from too, and the removal is dropped. Either is
    /// answered with no error (CopyQ 17.0, 8 deletes of 8 tabs at once, one tab open).
    removals: Arc<tokio::sync::Mutex<()>>,
    /// Batches sent to CopyQ so far (each a round trip).
    trips: Arc<std::sync::atomic::AtomicUsize>,
    /// The tab list CopyQ gave last: what a read guesses its tabs from, to ask the tab list with
    /// its rows in one round trip ([`SocketBackend::read`]). Only a guess: each such read checks
    /// it against the tab list asked in its batch.
    seen: Arc<std::sync::Mutex<Arc<[String]>>>,
    /// Held (shared) while a batch is sent, and alone by the one step that must know no batch
    /// of the gateway's goes between two of its own: removing a tab a read made by touching it
    /// (`unmake`), after checking it is still empty.
    sends: Arc<tokio::sync::RwLock<()>>,
}

/// A socket failure in the backend's terms: a lost or refused connection is `Unavailable`.
fn failed(e: SocketError) -> BackendError {
    match e {
        e if e.is_disconnect() => BackendError::Unavailable,
        SocketError::Timeout(d) => BackendError::Timeout(d),
        other => BackendError::Failed(other.to_string()),
    }
}

pub fn item_of(map: &Map) -> Item {
    let text = |mime| {
        map_get(map, mime)
            .and_then(Value::to_text)
            .unwrap_or_default()
    };
    Item {
        text: text(MIME_TEXT),
        tags: split_tags(&text(MIME_TAGS)),
        note: text(MIME_NOTE),
        secret: text(MIME_PASSWORD_HINT) == "secret",
        pinned: holds_pin(map),
        bare: rows::is_bare(map),
        content: Default::default(),
    }
}

/// Whether a row's data holds the mark of an item the owner pinned in CopyQ.
pub(super) fn holds_pin(map: &Map) -> bool {
    map_get(map, crate::backend::protocol::MIME_PINNED).is_some()
}

pub fn map_of(item: &Item) -> Map {
    let mut map = vec![(MIME_TEXT.to_owned(), Value::bytes(item.text.as_bytes()))];
    if !item.tags.is_empty() {
        map.push((
            MIME_TAGS.to_owned(),
            Value::bytes(item.tags.join(",").as_bytes()),
        ));
    }
    if !item.note.is_empty() {
        map.push((MIME_NOTE.to_owned(), Value::bytes(item.note.as_bytes())));
    }
    map
}

/// A row as the `int` slots take.
fn row_arg(r: usize) -> i32 {
    i32::try_from(r).unwrap_or(i32::MAX)
}

/// Cut to at most `n` UTF-16 units, as the CLI script does (so both backends agree exactly).
/// Cut in place: a whole copy a character at a time was a fifth of a tree's work.
fn cut(mut s: String, n: Option<usize>) -> String {
    let Some(n) = n else { return s };
    // A character takes no more UTF-16 units than UTF-8 bytes: no more bytes than `n`, no cut.
    if s.len() <= n {
        return s;
    }
    let mut units = 0;
    let end = s.char_indices().find_map(|(at, c)| {
        units += c.len_utf16();
        (units > n).then_some(at)
    });
    if let Some(end) = end {
        s.truncate(end);
    }
    s
}

impl SocketBackend {
    pub fn new(config: SocketConfig) -> Self {
        let options_file = crate::backend::options::beside(&config.path);
        Self {
            config: Arc::new(config),
            conn: Arc::new(Mutex::new(None)),
            limit: Arc::new(crate::backend::options::MaxItems::new(options_file)),
            owed: Arc::default(),
            delays: Arc::default(),
            removals: Arc::default(),
            trips: Arc::default(),
            seen: Arc::new(std::sync::Mutex::new(Arc::from(Vec::new()))),
            sends: Arc::default(),
        }
    }

    /// How many batches of calls were sent to CopyQ so far, each a round trip (for tests of how
    /// many a write makes).
    pub fn round_trips(&self) -> usize {
        self.trips.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn trip(&self) {
        self.trips
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Where this backend looks for CopyQ, for messages that must say so.
    pub fn target(&self) -> String {
        format!("socket {}", self.config.path.display())
    }

    /// Connect and detect the layout now (if not connected): the layout the server speaks.
    pub async fn probe(&self) -> Result<Layout, BackendError> {
        self.client().await.map(|(_, layout)| layout)
    }

    /// The live connection, made (and its layout detected) if there is none or it was lost.
    async fn client(&self) -> Result<(Arc<Client>, Layout), BackendError> {
        let mut conn = self.conn.lock().await;
        if let Some((c, layout)) = conn.as_ref()
            && !c.is_closed()
        {
            return Ok((c.clone(), *layout));
        }
        let options = Options {
            timeout: self.config.timeout,
            max_frame_len: MAX_FRAME_LEN,
        };
        let client = Arc::new(
            Client::connect(&self.config.path, options)
                .await
                .map_err(failed)?,
        );
        let layout = match detect(&client).await.map_err(failed)? {
            Detected::Known(layout) => layout,
            Detected::Unknown(why) => return Err(BackendError::Unsupported(why)),
        };
        tracing::debug!(layout = %layout.describe(), "connected to CopyQ's socket");
        *conn = Some((client.clone(), layout));
        Ok((client, layout))
    }

    async fn call(&self, call: Call) -> Result<Value, BackendError> {
        Ok(self
            .call_many(vec![call])
            .await?
            .pop()
            .unwrap_or(Value::Invalid))
    }

    async fn call_many(&self, calls: Vec<Call>) -> Result<Vec<Value>, BackendError> {
        if calls.is_empty() {
            return Ok(Vec::new());
        }
        let (client, _) = self.client().await?;
        self.trip();
        self.send(&client, &calls)
            .await?
            .replies()
            .await
            .into_iter()
            .collect::<Result<_, _>>()
            .map_err(failed)
    }

    /// [`Client::call_parts`]: `parts` in one round trip, each answered on its own (`Err`
    /// outside: nothing was sent).
    async fn call_parts(
        &self,
        parts: &[&[Call]],
    ) -> Result<Vec<Result<Vec<Value>, BackendError>>, BackendError> {
        let (client, _) = self.client().await?;
        self.trip();
        let all: Vec<Call> = parts.iter().flat_map(|p| p.iter().cloned()).collect();
        let sent = self.send(&client, &all).await?;
        let results = super::client::by_part(sent.replies().await, parts);
        Ok(results.into_iter().map(|r| r.map_err(failed)).collect())
    }

    /// Send `calls` on `client` as one batch, holding `sends` shared while it is sent: every
    /// batch of the backend's but `unmake`'s (which holds it alone) goes this way.
    async fn send<'c>(&self, client: &'c Client, calls: &[Call]) -> Result<Sent<'c>, BackendError> {
        let _sending = self.sends.read().await;
        client.send(calls).map_err(failed)
    }

    /// The tab list CopyQ gave last (see `seen`).
    fn seen_tabs(&self) -> Arc<[String]> {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Tabs the gateway removed: no read guesses them from the last tab list (which a read of
    /// one would otherwise name, making CopyQ before 17.0 make it again for an instant).
    fn forget_tabs(&self, gone: &[String]) {
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if seen.iter().any(|t| gone.contains(t)) {
            let kept: Vec<String> = seen.iter().filter(|t| !gone.contains(t)).cloned().collect();
            *seen = Arc::from(kept);
        }
    }

    /// Note the tab list CopyQ gave now.
    fn saw_tabs(&self, tabs: &[String]) {
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if *seen.as_ref() != *tabs {
            *seen = Arc::from(tabs);
        }
    }

    async fn layout(&self) -> Result<Layout, BackendError> {
        Ok(self.client().await?.1)
    }

    pub async fn ping(&self) -> Result<(), BackendError> {
        self.tabs().await.map(|_| ())
    }

    pub async fn health(&self) -> crate::backend::Health {
        match (self.probe().await, self.ping().await) {
            (Ok(layout), Ok(())) => crate::backend::Health {
                up: true,
                backend: "socket",
                copyq_version: None,
                protocol: Some(layout.describe()),
                tried: None,
            },
            _ => crate::backend::Health::down("socket"),
        }
    }

    pub async fn tabs(&self) -> Result<Vec<String>, BackendError> {
        let call = slots::tabs();
        let reply = self.call(call.clone()).await?;
        let tabs = slots::expect_string_list(&call, reply).map_err(failed)?;
        self.saw_tabs(&tabs);
        Ok(tabs)
    }

    /// CopyQ's `maxitems` (slow for CopyQ: it builds its settings dialog), uncached.
    async fn max_items(&self) -> Result<usize, BackendError> {
        let call = slots::config("maxitems");
        let reply = self.call(call.clone()).await?;
        let map = slots::expect_map(&call, reply).map_err(failed)?;
        let value = map_get(&map, "maxitems")
            .and_then(Value::to_text)
            .or_else(|| match map_get(&map, "maxitems") {
                Some(Value::Int(n)) => Some(n.to_string()),
                _ => None,
            });
        value
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| BackendError::Failed("CopyQ did not report maxitems".into()))
    }
}

#[cfg(test)]
mod cut_tests {
    use super::cut;

    proptest::proptest! {
        /// As the character-by-character copy it replaces (and the CLI script) cut.
        #[test]
        fn cuts_as_a_copy_of_the_first_units_would(s in "[aя😀\r]{0,40}", n in 0usize..50) {
            let mut units = 0;
            let copy: String = s
                .chars()
                .take_while(|c| {
                    units += c.len_utf16();
                    units <= n
                })
                .collect();
            proptest::prop_assert_eq!(cut(s.clone(), Some(n)), copy);
            proptest::prop_assert_eq!(cut(s.clone(), None), s);
        }
    }
}
