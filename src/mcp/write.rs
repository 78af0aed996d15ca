//! `mcp_write`: changes confined to managed tabs. Not built yet: every mode answers with a clear
//! error, and the tool is already hidden from read tokens.

use serde_json::{Map, Value};

use super::Tools;
use super::error::ToolError;

fn not_yet() -> ToolError {
    ToolError::CopyQ(
        "mcp_write is not available in this version of copyq-mcp; nothing was changed".into(),
    )
}

pub async fn call(_tools: &Tools, _args: &Map<String, Value>) -> Result<String, ToolError> {
    Err(not_yet())
}

pub async fn check(
    _tools: &Tools,
    _params: &Map<String, Value>,
) -> Result<(String, usize), ToolError> {
    Err(not_yet())
}
