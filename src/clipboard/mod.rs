//! Clipboard domain rules: how tool paths map to CopyQ tabs, which tabs are in a scope, which are writable,
//! and how items are shown. Pure functions over strings: no I/O, no MCP, no HTTP.

mod content;
mod coverage;
mod path;
mod preview;
mod rtf;
mod version;

pub use content::{derive_text, descriptor};
pub use coverage::Coverage;
pub use path::{MCP_PREFIX, PathError, Roots, Scope, TabRef, is_mcp_tab, read_address, tab_depth};
pub use preview::{PREVIEW_CHARS, flatten, preview, push_preview};
pub use version::version;
