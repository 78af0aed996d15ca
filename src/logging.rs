//! Logging to stderr with a `tracing` filter from `RUST_LOG` or `log.level`. Whatever the filter
//! says, crates that log whole messages or headers at debug/trace (rmcp dumps every JSON-RPC
//! message, so clipboard contents) are capped at info: tokens and clipboard contents never reach
//! the log, even with `RUST_LOG=trace`.

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

pub fn init(level: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let layer = fmt::layer()
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .with_filter(filter.and(filter_fn(|meta| !redacts(meta))));
    let _ = tracing_subscriber::registry().with(layer).try_init();
}
