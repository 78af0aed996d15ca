//! The CLI script's reply: one JSON object on its last line of output, after the lines a write
//! prints as it goes (so that a process that dies halfway still tells): `made:` when it changes
//! CopyQ, `delays:[...]` when it zeroes the save delays (their values before) and `delays:back`
//! once they are put back.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};

use super::super::{BackendError, Made};

#[derive(Deserialize)]
struct Reply<T> {
    ok: bool,
    error: Option<String>,
    refusal: Option<String>,
    #[serde(default)]
    extra: Refusal,
    /// What a write that failed had changed in CopyQ.
    made: Option<Made>,
    /// The save delays could not be put back after the failed body (whose error wins).
    restore_error: Option<String>,
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

/// Save delays a write's script zeroed and did not put back: its `delays:[...]` line (the values
/// before) was not followed by `delays:back`. They are lent to one process at a time to put back:
/// a call running beside the one that carries them does not also carry them, so it cannot put them
/// back while a write that went on zeroes them again.
#[derive(Debug, Clone, Default)]
pub(super) struct Owed(Arc<Mutex<OwedDelays>>);

#[derive(Debug, Default)]
struct OwedDelays {
    values: Option<Value>,
    /// A running process carries them.
    lent: bool,
}

impl Owed {
    fn lock(&self) -> std::sync::MutexGuard<'_, OwedDelays> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether delays are owed and no running process carries them.
    pub(super) fn waiting(&self) -> bool {
        let owed = self.lock();
        owed.values.is_some() && !owed.lent
    }

    /// The owed delays for one process to carry, unless another one does.
    pub(super) fn lend(&self) -> Lent {
        let mut owed = self.lock();
        let values = match (&owed.values, owed.lent) {
            (Some(values), false) => Some(values.clone()),
            _ => None,
        };
        owed.lent |= values.is_some();
        Lent {
            owed: self.clone(),
            values,
        }
    }

    /// Learn from a script's output whether it left save delays owed, or put owed ones back.
    pub(super) fn note(&self, stdout: &[u8]) {
        let text = String::from_utf8_lossy(stdout);
        let Some(last) = text
            .lines()
            .filter_map(|l| l.strip_prefix("delays:"))
            .next_back()
        else {
            return;
        };
        let mut owed = self.lock();
        if last == "back" {
            if owed.values.take().is_some() {
                tracing::info!("CopyQ's save delays are put back");
            }
        } else if let Ok(values) = serde_json::from_str::<Value>(last) {
            tracing::error!("a write could not put CopyQ's save delays back; the next call will");
            owed.values = Some(values);
        }
    }
}

/// Owed delays one process carries; when it is dropped (the process ended, its output noted, or it
/// never ran), a later process may carry whatever is still owed.
pub(super) struct Lent {
    owed: Owed,
    values: Option<Value>,
}

impl Lent {
    pub(super) fn values(&self) -> Option<&Value> {
        self.values.as_ref()
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        if self.values.is_some() {
            self.owed.lock().lent = false;
        }
    }
}

/// What the `made:` lines a write's script printed say it changed, the last one counting.
pub(super) fn made_so_far(stdout: &[u8]) -> Option<Made> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("made:"))
        .filter_map(|m| serde_json::from_value(json!(m)).ok())
        .next_back()
}

/// The script's reply: its last line of output.
pub(super) fn parse_reply<T: DeserializeOwned>(
    stdout: &[u8],
    made: Option<Made>,
) -> Result<T, BackendError> {
    let last = stdout.rsplit(|b| *b == b'\n').next().unwrap_or_default();
    let reply: Reply<T> = serde_json::from_slice(last).map_err(|e| {
        let cause = BackendError::Failed(format!("unreadable reply from copyq: {e}"));
        match made {
            Some(made) => BackendError::after(made, cause),
            None => cause,
        }
    })?;
    if let Some(e) = &reply.restore_error {
        tracing::error!(error = %e, "cannot put CopyQ's save delays back after a failed write; set them with `copyq config NAME VALUE`");
    }
    let extra = reply.extra;
    let result = match (reply.ok, reply.body, reply.refusal.as_deref()) {
        (true, Some(body), _) => Ok(body),
        (false, _, Some("no_tab")) => Err(BackendError::NoSuchTab),
        (false, _, Some("no_row")) => Err(BackendError::NoSuchRow {
            count: extra.count.unwrap_or(0),
        }),
        (false, _, Some("conflict")) => Err(BackendError::Conflict),
        (false, _, Some("kept")) => Err(BackendError::Kept),
        (false, _, Some("pinned")) => Err(BackendError::Pinned),
        (false, _, Some("misdirected")) => Err(BackendError::Misdirected {
            tab: extra.tab.unwrap_or_default(),
        }),
        (false, _, Some("tab_full")) => Err(BackendError::TabFull {
            limit: extra.limit.unwrap_or(0),
        }),
        _ => Err(BackendError::Failed(
            reply.error.unwrap_or_else(|| "unexpected reply".into()),
        )),
    };
    match (result, reply.made.or(made)) {
        (Err(e), Some(made)) => Err(BackendError::after(made, e)),
        (result, _) => result,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Done {
        persisted: String,
    }

    fn parsed(out: &str) -> Result<Done, BackendError> {
        parse_reply(out.as_bytes(), made_so_far(out.as_bytes()))
    }

    #[test]
    fn owed_delays_are_carried_by_one_process_at_a_time() {
        let owed = Owed::default();
        assert_eq!(owed.lend().values(), None);
        owed.note(b"made:change\ndelays:[\"1\",\"2\",\"3\",\"4\",\"5\"]\n");
        assert!(owed.waiting());
        let first = owed.lend();
        assert_eq!(first.values(), Some(&json!(["1", "2", "3", "4", "5"])));
        assert!(!owed.waiting());
        assert_eq!(
            owed.lend().values(),
            None,
            "a second process does not carry them"
        );
        // The first process ended without putting them back: the next one carries them.
        drop(first);
        let again = owed.lend();
        assert_eq!(again.values(), Some(&json!(["1", "2", "3", "4", "5"])));
        owed.note(b"delays:back\n{\"ok\":true}");
        drop(again);
        assert!(!owed.waiting());
        assert_eq!(owed.lend().values(), None);
    }

    #[test]
    fn the_reply_is_the_last_line_and_made_lines_say_what_a_failure_left() {
        let done = parsed("made:change\n{\"ok\":true,\"persisted\":\"unload\"}").unwrap();
        assert_eq!(done.persisted, "unload");
        let copied = "made:copy\n{\"ok\":false,\"refusal\":\"conflict\",\"made\":\"copy\"}";
        assert!(matches!(
            parsed(copied),
            Err(BackendError::Partial { made: Made::Copy, cause }) if matches!(*cause, BackendError::Conflict)
        ));
        // The process died before its reply: the last made line counts.
        assert!(matches!(
            parsed("made:copy\nmade:change\n"),
            Err(BackendError::Partial {
                made: Made::Change,
                ..
            })
        ));
        assert!(matches!(
            parsed("{\"ok\":false,\"refusal\":\"conflict\"}"),
            Err(BackendError::Conflict)
        ));
    }
}
