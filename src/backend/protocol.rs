//! The durable-write protocol, described once. Both real backends follow it step for step: the
//! socket backend in `socket/backend/write.rs` and `socket/backend/durable.rs`, the CLI backend in `copyq.js`, each step marked with a
//! `write protocol: STEP` comment there (a test below checks both carry every step, and nothing
//! else). The constants both use come from here; the CLI script gets them as `PROTOCOL`.
//!
//! A write is acknowledged only once CopyQ has saved it (CopyQ saves minutes later on its own, and a
//! crash before that loses the change: bench/durability.sh measures it):
//!
//! 1. `check`: before anything changes, the row still holds the item the write was planned against
//!    (change, remove, move source), or the target has room under `maxitems` (insert, move target:
//!    CopyQ would silently evict the oldest item). A delete whose plan read its row as text, tags
//!    and note alone (`Item::bare`: the socket backend's reads see every format) kept only the
//!    item in its audit entry, so its check also refuses a row that gained a format since.
//! 2. `unload`: unload every touched tab that exists, which saves it. A tab CopyQ keeps loaded (open
//!    in its window, or with an editor open) is *pinned*. The socket backend makes it before 1:
//!    reading an unloaded tab loads it, and a tab read, then unloaded, is loaded again by the
//!    body; unloaded first, it is loaded once for the whole write. A change, delete or move
//!    makes it before the write is even planned, with the write's locks held until the write
//!    is made (`Backend::prepare_write`: the plan's read loads the tab once; otherwise in one
//!    batch with the check); a group of inserts, in one batch with its room checks (see
//!    `socket/backend/group.rs`), and the tab list with them when every tab was listed last time. Neither step changes an item, and nothing changes before the
//!    write's audit entries are on disk.
//! 3. `zero-delays`: if a tab is pinned, read the [`SAVE_DELAYS`] options and set them to 0, so the
//!    change itself schedules an immediate save.
//! 4. `body`: the write.
//! 5. `verify`: read back what was written (insert and move target: one more row, row 0 equal;
//!    change: the row equal; remove and move source: one row fewer, the source checked again
//!    before it is removed; CopyQ may run an `onItemsRemoved()` script before a removal, which
//!    can refuse it with no error, and serves the calls sent after the removal while it waits for
//!    that script: the socket backend sends a removal in a round trip of its own) and check the
//!    target tab exists under its exact name (CopyQ may take a tab differing by `&`, see
//!    [`super::names`]). A failed check is an error, never a silent success.
//! 6. `restore-delays`: put the save delays back, whether or not the body succeeded (and if
//!    zeroing them failed halfway). When the body failed, its error is the one reported; this
//!    step's own failure is logged.
//! 7. `unload-after`: unload the touched tabs again: saved now. (When no tab is pinned the socket
//!    backend sends it in the body's last round trip, after the verify, as 6 has nothing to do.)
//! 8. `save-opened`: a tab that no step found pinned but that the unload after left loaded was
//!    opened in CopyQ's window meanwhile: its change is only in CopyQ's memory until its save
//!    delay (minutes). Set the save delays to 0 and put them back: CopyQ reloads, so saves,
//!    every loaded tab when an option changes (one with an item's editor open only once the
//!    editor closes). The write then reports itself saved by the save delays.
//! 9. `flush-tab-list`: if a tab was removed, or made by `tab_create`, make CopyQ save its tab
//!    list now (any `config()` call does; otherwise CopyQ saves it a second after the change, 17.0
//!    at once). For a removal this is what keeps the tab from coming back after a crash. A tab a
//!    write makes by writing into it (an add, a move's target) is not flushed: at start CopyQ
//!    also lists every tab whose data file it finds, and `unload-after` wrote one
//!    (tests/copyq/safety.rs: a SIGKILL right after the reply), so only its place in the tab
//!    order can differ after a crash within that second. The flush costs CopyQ's one thread about
//!    20 ms (it builds its settings dialog for any `config()` call), where a durable add costs it
//!    1-2 ms: every first add to a new tab paid it (bench/results.md, "Issue 22 item 5, stop
//!    50"). `tab_create`, whose tab is the whole write, keeps the list true at once, an empty
//!    tab's data file included.
//!
//! A failure once CopyQ has changed is [`super::BackendError::Partial`], saying what was made
//! ([`super::Made`]): after the body, a failed step 6, 7, 8 or 9 (`change`); in a move, anything
//! failing after the item is in its target (`copy`); CopyQ not answering during the body
//! (`unknown`). The CLI script prints a `made:` line the moment each becomes true, so that even
//! a `copyq` process that dies halfway (CopyQ gone) leaves the gateway knowing.

use serde_json::{Value, json};

pub const MIME_TEXT: &str = "text/plain";
pub const MIME_TAGS: &str = "application/x-copyq-tags";
pub const MIME_NOTE: &str = "application/x-copyq-item-notes";
/// Set to `secret` on what a password manager put on the clipboard (KDE's convention, which
/// CopyQ honours): such an item is never shown to a client.
pub const MIME_PASSWORD_HINT: &str = "x-kde-passwordManagerHint";
/// Held (empty) by an item the owner pinned in CopyQ (its "Pin" command, the pinned-items plugin):
/// CopyQ keeps a pinned row where it is, refuses to remove it, and puts an item inserted above it
/// below it instead. A delete or move of one is refused before anything changes; an add to a tab
/// whose first rows are pinned lands below them, at the row it answers.
pub const MIME_PINNED: &str = "application/x-copyq-item-pinned";

/// CopyQ's options for how long after a change it saves a tab (step 3).
pub const SAVE_DELAYS: [&str; 5] = [
    "save_delay_ms_on_item_added",
    "save_delay_ms_on_item_removed",
    "save_delay_ms_on_item_moved",
    "save_delay_ms_on_item_modified",
    "save_delay_ms_on_item_edited",
];

/// The steps, in order, as the implementations mark them.
pub const STEPS: [&str; 9] = [
    "check",
    "unload",
    "zero-delays",
    "body",
    "verify",
    "restore-delays",
    "unload-after",
    "save-opened",
    "flush-tab-list",
];

/// The constants as the CLI script reads them (`PROTOCOL.MIME_TEXT`, ...).
pub fn for_script() -> Value {
    json!({
        "MIME_TEXT": MIME_TEXT,
        "MIME_TAGS": MIME_TAGS,
        "MIME_NOTE": MIME_NOTE,
        "MIME_PASSWORD_HINT": MIME_PASSWORD_HINT,
        "MIME_PINNED": MIME_PINNED,
        "SAVE_DELAYS": SAVE_DELAYS,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The steps marked in `source`, in order of appearance.
    fn marked(source: &str) -> Vec<&str> {
        source
            .match_indices("write protocol: ")
            .filter_map(|(at, m)| {
                let rest = &source[at + m.len()..];
                rest.split(|c: char| !(c.is_ascii_lowercase() || c == '-'))
                    .next()
            })
            .collect()
    }

    #[test]
    fn both_implementations_mark_every_step_and_only_those() {
        for (name, source) in [
            ("copyq.js", include_str!("copyq.js")),
            (
                "socket/backend/write.rs and durable.rs",
                concat!(
                    include_str!("socket/backend/write.rs"),
                    include_str!("socket/backend/durable.rs")
                ),
            ),
            // A group of inserts follows the protocol once for the whole group.
            (
                "socket/backend/group.rs",
                include_str!("socket/backend/group.rs"),
            ),
        ] {
            let steps = marked(source);
            for step in STEPS {
                assert!(steps.contains(&step), "{name} does not mark step {step}");
            }
            for step in &steps {
                assert!(STEPS.contains(step), "{name} marks an unknown step {step}");
            }
        }
    }

    #[test]
    fn the_script_gets_the_constants() {
        let v = for_script();
        assert_eq!(v["MIME_NOTE"], MIME_NOTE);
        assert_eq!(v["SAVE_DELAYS"][4], "save_delay_ms_on_item_edited");
    }
}
