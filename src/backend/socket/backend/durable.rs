//! The steps of the durable-write protocol ([`crate::backend::protocol`]) around a write's body,
//! over the socket: save the touched tabs before and after, and zero the save delays for the
//! duration when a tab cannot be unloaded. A write whose body was made and a later step then failed
//! is [`BackendError::Partial`]; when the body failed, its error wins and a failure to put the save
//! delays back goes to the log. Save delays that could not be put back (CopyQ gone) are owed: put
//! back before the next read or write.

use std::future::Future;
use std::sync::PoisonError;

use super::super::slots;
use super::super::value::{Call, Value, map_get};
use super::{SocketBackend, failed};
use crate::backend::protocol::SAVE_DELAYS;
use crate::backend::{BackendError, Made, Persisted};

fn set_config(name: &str, value: &str) -> Call {
    Call::new(
        "config(QVariantList)",
        vec![Value::List(vec![Value::str(name), Value::str(value)])],
    )
}

/// What the steps before a write's body found of the tabs it touches.
struct Before {
    /// A touched tab did not exist: the tab list is saved after the write.
    pub created: bool,
    /// A touched tab stayed loaded when unloaded: the save delays are zeroed around the body.
    pub pinned: bool,
}

/// The value of option `name` in the reply to `config(name)`.
fn config_text(name: &str, reply: Value) -> Result<String, BackendError> {
    let map = slots::expect_map(&slots::config(name), reply).map_err(failed)?;
    Ok(match map_get(&map, name) {
        Some(Value::Int(n)) => n.to_string(),
        Some(v) => v.to_text().unwrap_or_default(),
        None => String::new(),
    })
}

impl SocketBackend {
    /// Tabs CopyQ saved and dropped from memory (it keeps those open in its window).
    pub(super) async fn unload(&self, tabs: &[String]) -> Result<Vec<String>, BackendError> {
        if tabs.is_empty() {
            return Ok(Vec::new());
        }
        let names: Vec<&str> = tabs.iter().map(String::as_str).collect();
        let call = slots::unload_tabs(&names);
        let reply = self.call(call.clone()).await?;
        slots::expect_string_list(&call, reply).map_err(failed)
    }

    /// The save delays as they are, then all set to 0. If setting them fails, some may be 0
    /// already: they are put back before the error is returned.
    pub(super) async fn zero_delays(&self) -> Result<Vec<String>, BackendError> {
        let reads = SAVE_DELAYS.iter().map(|k| slots::config(k)).collect();
        let replies = self.call_many(reads).await?;
        let mut old = Vec::new();
        for (k, reply) in SAVE_DELAYS.iter().zip(replies) {
            old.push(config_text(k, reply)?);
        }
        let zeros = SAVE_DELAYS.iter().map(|k| set_config(k, "0")).collect();
        if let Err(e) = self.call_many(zeros).await {
            self.restore_delays_or_log(&old).await;
            return Err(e);
        }
        Ok(old)
    }

    pub(super) async fn put_delays(&self, old: &[String]) -> Result<(), BackendError> {
        let calls = SAVE_DELAYS
            .iter()
            .zip(old)
            .map(|(k, v)| set_config(k, v))
            .collect();
        self.call_many(calls).await.map(|_| ())
    }

    /// Put the save delays back; a failure is logged, and they are owed: put back before the
    /// next call that reaches CopyQ.
    pub(super) async fn restore_delays_or_log(&self, old: &[String]) {
        if let Err(e) = self.put_delays(old).await {
            self.owe(old, &e);
        }
    }

    pub(super) fn owe(&self, old: &[String], e: &BackendError) {
        tracing::error!(error = %e, "cannot put CopyQ's save delays back yet; the next call will");
        *self.owed.lock().unwrap_or_else(PoisonError::into_inner) = Some(old.to_vec());
    }

    /// Put back save delays an earlier write could not (an error if CopyQ still does not answer).
    pub(super) async fn settle_owed(&self) -> Result<(), BackendError> {
        let owed = self
            .owed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(old) = owed {
            self.put_delays(&old).await?;
            tracing::info!("CopyQ's save delays are put back");
            *self.owed.lock().unwrap_or_else(PoisonError::into_inner) = None;
        }
        Ok(())
    }

    pub(super) async fn durably<T, F, Fut>(
        &self,
        names: &[&str],
        body: F,
    ) -> Result<(T, Persisted), BackendError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, BackendError>>,
    {
        self.settle_owed().await?;
        let existing = self.existing(names).await?;
        // write protocol: unload
        let unloaded = self.unload(&existing).await?;
        let before = Before {
            created: existing.len() < names.len(),
            pinned: existing.iter().any(|n| !unloaded.contains(n)),
        };
        self.durably_from(names, before, body).await
    }

    /// The protocol from its third step on, once what existed of `names` is unloaded (owed
    /// delays settled first). (An insert follows the protocol in a group: group.rs.)
    async fn durably_from<T, F, Fut>(
        &self,
        names: &[&str],
        before: Before,
        body: F,
    ) -> Result<(T, Persisted), BackendError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, BackendError>>,
    {
        // write protocol: zero-delays
        let old = match before.pinned {
            true => Some(self.zero_delays().await?),
            false => None,
        };
        // write protocol: body (verify is each body's last part)
        let result = match body().await {
            // CopyQ stopped answering with the write sent: it may still make it.
            Err(e @ BackendError::Timeout(_)) => Err(BackendError::after(Made::Unknown, e)),
            other => other,
        };
        if let Some(old) = &old {
            // write protocol: restore-delays
            match &result {
                Ok(_) => {
                    if let Err(e) = self.put_delays(old).await {
                        self.owe(old, &e);
                        return Err(BackendError::after(Made::Change, e));
                    }
                }
                // The body's error is what the client hears; this one is logged.
                Err(_) => self.restore_delays_or_log(old).await,
            }
        }
        let value = result?;
        self.save_after(names, before.created)
            .await
            .map_err(|e| BackendError::after(Made::Change, e))?;
        Ok((
            value,
            if before.pinned {
                Persisted::SaveDelay
            } else {
                Persisted::Unload
            },
        ))
    }

    /// Save what the write touched now that it is made, in one batch. Every one of `names` is a
    /// tab now: the body made or found each (its verify checked), so none is created by naming it.
    async fn save_after(&self, names: &[&str], created: bool) -> Result<(), BackendError> {
        // write protocol: unload-after
        let mut calls = vec![slots::unload_tabs(names)];
        if created {
            // write protocol: flush-tab-list
            calls.push(slots::config("tabs"));
        }
        self.call_many(calls).await.map(|_| ())
    }

    /// Those of `names` that are tabs now.
    pub(super) async fn existing(&self, names: &[&str]) -> Result<Vec<String>, BackendError> {
        let all = self.tabs().await?;
        Ok(names
            .iter()
            .filter(|n| all.iter().any(|a| a == *n))
            .map(|n| n.to_string())
            .collect())
    }

    /// CopyQ saves its tab list a second after a change; any config() call saves it at once.
    pub(super) async fn flush_tab_list(&self) -> Result<(), BackendError> {
        self.call(slots::config("tabs")).await.map(|_| ())
    }
}
