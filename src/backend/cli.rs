//! CopyQ through its `copyq` command line: one `copyq eval` process per call, running the bundled
//! script with the request as JSON on stdin, so user data never becomes script text or argv.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;
use tokio::sync::Semaphore;

use super::{BackendError, Item, Persisted, ReadRequest, Snapshot, TabPage, split_tags};

const SCRIPT: &str = include_str!("copyq.js");

/// The bundled script, preceded by the write protocol's constants (see [`super::protocol`]).
fn script() -> &'static str {
    static WHOLE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    WHOLE.get_or_init(|| {
        format!(
            "var PROTOCOL = {};\n{SCRIPT}",
            super::protocol::for_script()
        )
    })
}
/// What the `copyq` client prints when no server answers.
const NO_SERVER: &str = "Cannot connect to server";

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
}

#[derive(Deserialize)]
struct Reply<T> {
    ok: bool,
    error: Option<String>,
    refusal: Option<String>,
    #[serde(default)]
    extra: Refusal,
    #[serde(flatten)]
    body: Option<T>,
}

/// Details of a refusal from the script.
#[derive(Deserialize, Default)]
struct Refusal {
    count: Option<usize>,
    limit: Option<usize>,
    tab: Option<String>,
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
}

impl CliBackend {
    pub fn new(config: CliConfig) -> Self {
        let slots = Arc::new(Semaphore::new(config.max_concurrent.max(1)));
        Self { config, slots }
    }

    pub async fn read(&self, request: &ReadRequest) -> Result<Snapshot, BackendError> {
        let mut body =
            serde_json::to_value(request).map_err(|e| BackendError::Failed(e.to_string()))?;
        body["op"] = json!("read");
        let reply: ReadReply = self.eval(&body).await?;
        let pages = reply
            .tabs
            .into_iter()
            .map(|p| TabPage {
                name: p.name,
                total: p.total,
                items: p
                    .items
                    .into_iter()
                    .map(|i| Item {
                        text: i.text,
                        tags: split_tags(&i.tags),
                        note: i.note,
                        secret: i.secret,
                    })
                    .collect(),
            })
            .collect();
        Ok(Snapshot {
            pages,
            max_items: reply.max_items,
            all_tabs: reply.all_tabs,
        })
    }

    pub async fn insert(
        &self,
        tab: &str,
        item: &Item,
        limit: usize,
    ) -> Result<Persisted, BackendError> {
        self.write(json!({"op": "insert", "tab": tab, "item": item, "limit": limit}))
            .await
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
    ) -> Result<Persisted, BackendError> {
        self.write(json!({"op": "move", "from": from, "row": row, "expect": expect, "to": to, "limit": limit}))
            .await
    }

    pub async fn create_tab(&self, tab: &str) -> Result<bool, BackendError> {
        let reply: CreateReply = self.eval(&json!({"op": "create_tab", "tab": tab})).await?;
        Ok(reply.status == "created")
    }

    pub async fn remove_tabs(&self, tabs: &[String]) -> Result<usize, BackendError> {
        let reply: RemoveTabsReply = self
            .eval(&json!({"op": "remove_tabs", "tabs": tabs}))
            .await?;
        Ok(reply.items_removed)
    }

    async fn write(&self, request: serde_json::Value) -> Result<Persisted, BackendError> {
        let reply: WriteReply = self.eval(&request).await?;
        Ok(reply.persisted)
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
            },
            Err(_) => super::Health::down("cli"),
        }
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.config.command);
        cmd.arg("eval").arg("--").arg(script());
        if let Some(session) = &self.config.session {
            cmd.env("COPYQ_SESSION_NAME", session);
        }
        if let Some(path) = &self.config.settings_path {
            cmd.env("COPYQ_SETTINGS_PATH", path);
        }
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        cmd
    }

    /// Run the script once with `request` on stdin and parse its JSON reply.
    async fn eval<T: DeserializeOwned>(
        &self,
        request: &serde_json::Value,
    ) -> Result<T, BackendError> {
        let input = serde_json::to_vec(request).map_err(|e| BackendError::Failed(e.to_string()))?;
        // Waiting for a slot counts against the call's timeout: CopyQ is never flooded, and a call
        // never waits longer than it may run.
        let started = Instant::now();
        let _slot = tokio::time::timeout(self.config.timeout, self.slots.acquire())
            .await
            .map_err(|_| BackendError::Timeout(self.config.timeout))?
            .map_err(|_| BackendError::Failed("backend closed".into()))?;
        let left = self.config.timeout.saturating_sub(started.elapsed());
        let mut child = self.command().spawn().map_err(|e| {
            BackendError::Failed(format!(
                "cannot run '{}': {e}",
                self.config.command.display()
            ))
        })?;
        let run = async {
            if let Some(mut stdin) = child.stdin.take() {
                stdin.write_all(&input).await?;
            }
            child.wait_with_output().await
        };
        let output = tokio::time::timeout(left, run)
            .await
            .map_err(|_| BackendError::Timeout(self.config.timeout))?
            .map_err(|e| BackendError::Failed(format!("copyq process: {e}")))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            if stderr.contains(NO_SERVER) {
                return Err(BackendError::Unavailable);
            }
            let first = stderr.lines().next().unwrap_or("no output").trim();
            return Err(BackendError::Failed(format!(
                "copyq exited with {}: {first}",
                output.status
            )));
        }
        let reply: Reply<T> = serde_json::from_slice(&output.stdout)
            .map_err(|e| BackendError::Failed(format!("unreadable reply from copyq: {e}")))?;
        let extra = reply.extra;
        match (reply.ok, reply.body, reply.refusal.as_deref()) {
            (true, Some(body), _) => Ok(body),
            (false, _, Some("no_tab")) => Err(BackendError::NoSuchTab),
            (false, _, Some("no_row")) => Err(BackendError::NoSuchRow {
                count: extra.count.unwrap_or(0),
            }),
            (false, _, Some("conflict")) => Err(BackendError::Conflict),
            (false, _, Some("misdirected")) => Err(BackendError::Misdirected {
                tab: extra.tab.unwrap_or_default(),
            }),
            (false, _, Some("tab_full")) => Err(BackendError::TabFull {
                limit: extra.limit.unwrap_or(0),
            }),
            _ => Err(BackendError::Failed(
                reply.error.unwrap_or_else(|| "unexpected reply".into()),
            )),
        }
    }
}
