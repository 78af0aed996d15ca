//! CopyQ through its `copyq` command line: one `copyq eval` process per call, running the bundled
//! script with the request as JSON on stdin, so user data never becomes script text or argv.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use tokio::sync::Semaphore;

use super::options::MaxItems;
use super::socket::path::SocketEnv;
use super::{
    BackendError, Item, Landed, Made, Persisted, ReadRequest, Snapshot, TabPage, split_tags,
};

mod content;
pub(crate) mod exe;
mod process;
mod reply;
mod rows;
mod whole;

use reply::Owed;

/// How to run the `copyq` client.
#[derive(Debug, Clone)]
pub struct CliConfig {
    /// The `copyq` executable.
    pub command: PathBuf,
    /// `COPYQ_SESSION_NAME` for the client, when not the default session.
    pub session: Option<String>,
    /// `COPYQ_SETTINGS_PATH` for the client, when not the default.
    pub settings_path: Option<PathBuf>,
    /// Longest a call may take before it is killed.
    pub timeout: Duration,
    /// `copyq` processes running at once; further calls wait their turn (within `timeout`).
    pub max_concurrent: usize,
}

#[derive(Debug, Clone)]
pub struct CliBackend {
    config: CliConfig,
    slots: Arc<Semaphore>,
    /// `maxitems`, cached while the options file of the session the client talks to is unchanged.
    limit: Arc<MaxItems>,
    /// Save delays a write zeroed and could not put back (its process died halfway): the next
    /// call's script puts them back first (one process at a time carries them).
    owed: Owed,
}

#[derive(Deserialize)]
struct ReadReply {
    tabs: Vec<RawPage>,
    max_items: Option<usize>,
    all_tabs: Vec<String>,
}

#[derive(Deserialize)]
struct WriteReply {
    persisted: Persisted,
    /// An insert's row (see [`Landed::row`]); none for the other writes.
    #[serde(default)]
    row: usize,
}

#[derive(Deserialize)]
struct CreateReply {
    status: String,
}

#[derive(Deserialize)]
struct RemoveTabsReply {
    items_removed: usize,
}

#[derive(Deserialize)]
struct PingReply {
    #[serde(default)]
    version: String,
}

/// `6.4.0` from `version()`'s first line (`CopyQ Clipboard Manager v6.4.0`; `9.0.0` without the v).
fn version_of(text: &str) -> Option<String> {
    let word = text.lines().next()?.split_whitespace().last()?;
    let number = word.strip_prefix('v').unwrap_or(word);
    number
        .starts_with(|c: char| c.is_ascii_digit())
        .then(|| number.to_owned())
}

#[derive(Deserialize)]
struct FormatReply {
    data: Option<String>,
}

#[derive(Deserialize)]
struct RawPage {
    name: String,
    total: usize,
    items: Vec<RawItem>,
}

#[derive(Deserialize)]
struct RawItem {
    text: String,
    tags: String,
    note: String,
    #[serde(default)]
    secret: bool,
    #[serde(default)]
    pinned: bool,
    #[serde(default)]
    content: content::RawContent,
}

impl From<RawItem> for Item {
    fn from(i: RawItem) -> Self {
        Item {
            text: i.text,
            tags: split_tags(&i.tags),
            note: i.note,
            secret: i.secret,
            pinned: i.pinned,
            bare: false,
            content: i.content.into(),
        }
    }
}

impl CliBackend {
    pub fn new(config: CliConfig) -> Self {
        let slots = Arc::new(Semaphore::new(config.max_concurrent.max(1)));
        let file = super::options::of_session(
            SocketEnv::from_process_env(),
            config.settings_path.as_deref(),
            config.session.as_deref(),
        );
        let limit = Arc::new(MaxItems::new(file));
        Self {
            config,
            slots,
            limit,
            owed: Owed::default(),
        }
    }

    /// Which CopyQ this backend runs, for messages that must say so: the command, the session and
    /// the settings path it passes on (inherited from the environment when not configured).
    pub fn target(&self) -> String {
        let c = &self.config;
        let session = c.session.as_deref().unwrap_or("default");
        let mut out = format!("copyq CLI {} (session {session}", c.command.display());
        if let Some(path) = &c.settings_path {
            out.push_str(&format!(", settings path {}", path.display()));
        }
        out.push(')');
        out
    }

    pub async fn read(&self, request: &ReadRequest) -> Result<Snapshot, BackendError> {
        Ok(self.read_asking(request, false).await?.0)
    }

    /// One format's bytes, base64 in the script's reply.
    pub async fn format(
        &self,
        tab: &str,
        row: usize,
        mime: &str,
    ) -> Result<Option<Vec<u8>>, BackendError> {
        use base64::Engine as _;
        let reply: FormatReply = self
            .eval(&json!({"op": "format", "tab": tab, "row": row, "mime": mime}))
            .await?;
        let Some(data) = reply.data else {
            return Ok(None);
        };
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .map(Some)
            .map_err(|e| BackendError::Failed(format!("format bytes not base64: {e}")))
    }

    /// `maxitems`: the backend's cache, else one `copyq` process asking it (and the tab list).
    pub async fn item_limit(&self) -> Result<usize, BackendError> {
        let ask = |ask: bool| async move {
            match ask {
                true => Ok((
                    (),
                    self.read_asking(&ReadRequest::tab_list(), true).await?.1,
                )),
                false => Ok(((), None)),
            }
        };
        Ok(self.limit.through(ask).await?.1)
    }

    /// A read, with `maxitems` asked in the same `copyq` process when the cache cannot answer.
    pub async fn read_with_max_items(
        &self,
        request: &ReadRequest,
    ) -> Result<(Snapshot, usize), BackendError> {
        self.limit
            .through(|ask| self.read_asking(request, ask))
            .await
    }

    /// A read; with `limits`, CopyQ's `maxitems` too (costs CopyQ ~20 ms).
    async fn read_asking(
        &self,
        request: &ReadRequest,
        limits: bool,
    ) -> Result<(Snapshot, Option<usize>), BackendError> {
        let mut body =
            serde_json::to_value(request).map_err(|e| BackendError::Failed(e.to_string()))?;
        body["op"] = json!("read");
        body["limits"] = json!(limits);
        let reply: ReadReply = self.eval(&body).await?;
        let pages = reply
            .tabs
            .into_iter()
            .map(|p| TabPage {
                name: p.name,
                total: p.total,
                items: p.items.into_iter().map(Item::from).collect(),
            })
            .collect();
        let snap = Snapshot {
            pages,
            all_tabs: reply.all_tabs,
        };
        Ok((snap, reply.max_items))
    }

    pub async fn insert(
        &self,
        tab: &str,
        item: &Item,
        limit: usize,
    ) -> Result<Landed, BackendError> {
        self.landed(json!({"op": "insert", "tab": tab, "item": item, "limit": limit}))
            .await
    }

    /// Each of `writes` as [`Self::insert`], one after another: each is a `copyq` process that
    /// saves what it wrote, so there is no flush to share.
    pub async fn insert_many(
        &self,
        writes: &[super::Insert<'_>],
    ) -> Result<Vec<Result<Landed, BackendError>>, BackendError> {
        // One CopyQ would make in a look-alike tab is refused by the tab list read first (as the
        // socket backend's group does); the others are made one after another.
        let all = self.read(&ReadRequest::tab_list()).await?.all_tabs;
        let mut results = Vec::with_capacity(writes.len());
        for (tab, item, limit) in writes {
            results.push(match super::clash(tab, &all) {
                Some(e) => Err(e),
                None => self.insert(tab, item, *limit).await,
            });
        }
        Ok(results)
    }

    pub async fn change(
        &self,
        tab: &str,
        row: usize,
        expect: &Item,
        item: &Item,
    ) -> Result<Persisted, BackendError> {
        self.write(json!({"op": "change", "tab": tab, "row": row, "expect": expect, "item": item}))
            .await
    }

    pub async fn remove(
        &self,
        tab: &str,
        row: usize,
        expect: &Item,
    ) -> Result<Persisted, BackendError> {
        self.write(json!({"op": "remove", "tab": tab, "row": row, "expect": expect}))
            .await
    }

    pub async fn move_item(
        &self,
        from: &str,
        row: usize,
        expect: &Item,
        to: &str,
        limit: usize,
    ) -> Result<Landed, BackendError> {
        self.landed(json!({"op": "move", "from": from, "row": row, "expect": expect, "to": to, "limit": limit}))
            .await
    }

    pub async fn create_tab(&self, tab: &str) -> Result<bool, BackendError> {
        let reply: CreateReply = self
            .eval_write(&json!({"op": "create_tab", "tab": tab}))
            .await?;
        Ok(reply.status == "created")
    }

    pub async fn remove_tabs(&self, tabs: &[String]) -> Result<usize, BackendError> {
        let reply: RemoveTabsReply = self
            .eval_write(&json!({"op": "remove_tabs", "tabs": tabs}))
            .await?;
        Ok(reply.items_removed)
    }

    async fn write(&self, request: serde_json::Value) -> Result<Persisted, BackendError> {
        Ok(self.landed(request).await?.persisted)
    }

    /// A write that inserts (an add, a move, a restore): with the row its item landed at.
    async fn landed(&self, request: serde_json::Value) -> Result<Landed, BackendError> {
        let reply: WriteReply = self.eval_write(&request).await?;
        Ok(Landed {
            persisted: reply.persisted,
            row: reply.row,
        })
    }

    pub async fn ping(&self) -> Result<(), BackendError> {
        let _: serde_json::Value = self.eval(&json!({ "op": "ping" })).await?;
        Ok(())
    }

    pub async fn health(&self) -> super::Health {
        match self.eval::<PingReply>(&json!({ "op": "ping" })).await {
            Ok(reply) => super::Health {
                up: true,
                backend: "cli",
                copyq_version: version_of(&reply.version),
                protocol: None,
                tried: None,
            },
            Err(_) => super::Health::down("cli"),
        }
    }
}
