//! One `copyq eval` process per call: the bundled script as its argument, the request on stdin,
//! at most `max_concurrent` at once, within the call's timeout (waiting for a slot included); a
//! write's process is never killed halfway.

use std::process::{Output, Stdio};
use std::time::Instant;

use serde::de::DeserializeOwned;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use super::reply::{made_so_far, parse_reply};
use super::{BackendError, CliBackend, Made};

const SCRIPT: &str = include_str!("../copyq.js");

/// The bundled script, preceded by the write protocol's constants (see
/// [`crate::backend::protocol`]) and the formats a read describes ([`crate::backend::content`]).
fn script() -> &'static str {
    static WHOLE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    WHOLE.get_or_init(|| {
        format!(
            "var PROTOCOL = {};\nvar CONTENT = {};\n{SCRIPT}",
            super::super::protocol::for_script(),
            super::super::content::for_script()
        )
    })
}
/// What the `copyq` client prints when no server answers.
const NO_SERVER: &str = "Cannot connect to server";

impl CliBackend {
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
    pub(super) async fn eval<T: DeserializeOwned>(
        &self,
        request: &serde_json::Value,
    ) -> Result<T, BackendError> {
        self.run(request, false).await
    }

    /// [`Self::eval`] of a write. A write's process is never killed halfway (that could leave
    /// CopyQ's save delays at 0, or a move in both tabs): past the timeout it is left to finish
    /// (holding its slot), and the write is reported as possibly made. A write whose process ended
    /// without putting back the save delays it zeroed (its connection to CopyQ dropped) has them
    /// put back by one more process before it answers; if CopyQ does not answer that either, the
    /// next call does it.
    pub(super) async fn eval_write<T: DeserializeOwned>(
        &self,
        request: &serde_json::Value,
    ) -> Result<T, BackendError> {
        let result = self.run(request, true).await;
        if self.owed.waiting() {
            // `run` sends the owed delays with any request; a ping does nothing else.
            if let Err(e) = self.ping().await {
                tracing::warn!(error = %e, "CopyQ's save delays are still owed");
            }
        }
        result
    }

    async fn run<T: DeserializeOwned>(
        &self,
        request: &serde_json::Value,
        write: bool,
    ) -> Result<T, BackendError> {
        let lent = self.owed.lend();
        let input = input(request, lent.values())?;
        // Waiting for a slot counts against the call's timeout: CopyQ is never flooded, and a call
        // never waits longer than it may run.
        let started = Instant::now();
        let slot = tokio::time::timeout(self.config.timeout, self.slots.clone().acquire_owned())
            .await
            .map_err(|_| BackendError::Timeout(self.config.timeout))?
            .map_err(|_| BackendError::Failed("backend closed".into()))?;
        let left = self.config.timeout.saturating_sub(started.elapsed());
        let mut child = self
            .command()
            .spawn()
            .map_err(|e| BackendError::NotRunnable {
                command: self.config.command.display().to_string(),
                reason: e.to_string(),
            })?;
        let owed = self.owed.clone();
        let mut process = tokio::spawn(async move {
            let _slot = slot;
            if let Some(mut stdin) = child.stdin.take() {
                stdin.write_all(&input).await?;
            }
            let output = child.wait_with_output().await?;
            owed.note(&output.stdout);
            drop(lent);
            Ok::<_, std::io::Error>(output)
        });
        let output = match tokio::time::timeout(left, &mut process).await {
            Ok(joined) => joined
                .map_err(|e| BackendError::Failed(format!("copyq process: {e}")))?
                .map_err(|e| BackendError::Failed(format!("copyq process: {e}")))?,
            Err(_) if write => {
                tracing::warn!(
                    "a write's copyq process is still running past the timeout; left to finish"
                );
                return Err(BackendError::after(
                    Made::Unknown,
                    BackendError::Timeout(self.config.timeout),
                ));
            }
            Err(_) => {
                // Dropping the process kills it.
                process.abort();
                return Err(BackendError::Timeout(self.config.timeout));
            }
        };
        outcome(&output)
    }
}

/// The request as the script reads it, with the owed save delays this process carries.
fn input(
    request: &serde_json::Value,
    owed: Option<&serde_json::Value>,
) -> Result<Vec<u8>, BackendError> {
    let mut request = request.clone();
    if let Some(values) = owed {
        request["owed_delays"] = values.clone();
    }
    serde_json::to_vec(&request).map_err(|e| BackendError::Failed(e.to_string()))
}

/// What a finished process says: its reply, or why it failed (and what it had made by then).
fn outcome<T: DeserializeOwned>(output: &Output) -> Result<T, BackendError> {
    let made = made_so_far(&output.stdout);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let cause = if stderr.contains(NO_SERVER) {
            BackendError::Unavailable
        } else {
            let first = stderr.lines().next().unwrap_or("no output").trim();
            BackendError::Failed(format!("copyq exited with {}: {first}", output.status))
        };
        return Err(match made {
            Some(made) => BackendError::after(made, cause),
            None => cause,
        });
    }
    parse_reply(&output.stdout, made)
}
