//! Logging to stderr with a `tracing` filter from `RUST_LOG` or `log.level`. Whatever the filter
//! says, crates that log whole messages or headers at debug/trace (rmcp dumps every JSON-RPC
//! message, so clipboard contents) are capped at info: tokens and clipboard contents never reach
//! the log, even with `RUST_LOG=trace`.

pub mod refusal;

use tracing::{Level, Metadata};
use tracing_subscriber::filter::{EnvFilter, FilterExt, filter_fn};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{Layer, fmt};

/// Targets whose debug and trace events may carry message bodies or headers.
const BODY_LOGGERS: &[&str] = &["rmcp", "hyper", "hyper_util", "h2", "reqwest"];

fn redacts(meta: &Metadata<'_>) -> bool {
    let target = meta.target();
    *meta.level() > Level::INFO
        && BODY_LOGGERS.iter().any(|t| {
            target == *t
                || target
                    .strip_prefix(t)
                    .is_some_and(|rest| rest.starts_with("::"))
        })
}

/// Longest a client-controlled value is logged, in characters.
const MAX_FIELD_CHARS: usize = 96;

/// A value a client chose (a mode, a tool or app name, a path), fit for one log line: control
/// and invisible characters escaped (`\n` cannot start a forged line), and cut to
/// 96 characters, saying how long it really was.
pub fn field(value: &str) -> String {
    field_up_to(value, MAX_FIELD_CHARS)
}

/// [`field`] for a sentence the gateway made around a client's value (an error naming a host or
/// a cause), which needs more room than a bare value: cut at `max` characters instead.
pub fn field_up_to(value: &str, max: usize) -> String {
    let mut out = String::new();
    for (chars, c) in value.chars().enumerate() {
        if chars == max {
            out.push_str(&format!("…({} bytes)", value.len()));
            return out;
        }
        if crate::text::is_deceptive(c) || c == '\\' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Log to stderr as `[log]` says: its filter (unless `RUST_LOG`), as text or JSON lines.
/// `level` is `log.level`; `json`: `log.format = "json"`.
pub fn init(level: &str, json: bool) {
    let filter = || {
        EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| EnvFilter::new(level))
            .and(filter_fn(|meta| !redacts(meta)))
    };
    let layer = fmt::layer().with_writer(std::io::stderr);
    let _ = if !json {
        tracing_subscriber::registry()
            .with(
                layer
                    .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                    .with_filter(filter()),
            )
            .try_init()
    } else {
        tracing_subscriber::registry()
            .with(layer.json().with_filter(filter()))
            .try_init()
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_stay_on_one_bounded_line() {
        assert_eq!(field("tree"), "tree");
        assert_eq!(field("tree\nFAKE LOG LINE"), "tree\\nFAKE LOG LINE");
        assert_eq!(field("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(field("back\\slash"), "back\\\\slash");
        let long = "x".repeat(1 << 20);
        let f = field(&long);
        assert_eq!(f, format!("{}…(1048576 bytes)", "x".repeat(96)));
        assert_eq!(field("заметки"), "заметки");
    }
}
