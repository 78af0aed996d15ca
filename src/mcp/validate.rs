//! `mcp_validate`: the checks of a real call (parameters, tab existence, index bounds) without its
//! side effects, with an estimate of the reply's size in tokens.

use serde_json::{Map, Value};

use super::ToolState;
use super::args::Args;
use super::error::ToolError;
use super::read::ReadQuery;

/// The parameters `mcp_validate` accepts.
pub(crate) const KNOWN: &[&str] = &["tool", "params"];
/// `tool`'s values: the schema lists these, the parser accepts these.
pub(crate) const TOOLS: &[&str] = &["read", "write"];
use super::write;
use crate::auth::Principal;
use crate::clipboard::Coverage;

/// `max_items` above this earns a `LARGE_RESPONSE` warning.
const LARGE_MAX_ITEMS: usize = 50;
/// A reply estimated above this many tokens earns a `LARGE_RESPONSE` warning.
const LARGE_TOKENS: usize = 5000;

/// Rough tokens for a reply: about four bytes of UTF-8 per token.
pub fn estimate_tokens(reply: &str) -> usize {
    reply.len().div_ceil(4)
}

pub async fn call(
    tools: &ToolState,
    principal: &Principal,
    args: &Map<String, Value>,
) -> Result<String, ToolError> {
    let a = Args::new(args);
    a.reject_unknown(KNOWN)?;
    let tool = a.choice("tool", TOOLS, "")?;
    if tool.is_empty() {
        return Err(ToolError::MissingParam {
            param: "tool",
            mode: String::new(),
        });
    }
    let params = match args.get("params") {
        Some(Value::Object(p)) => p,
        None | Some(Value::Null) => {
            return Err(ToolError::MissingParam {
                param: "params",
                mode: String::new(),
            });
        }
        Some(_) => {
            return Err(ToolError::InvalidParam(
                "Parameter 'params' must be an object".into(),
            ));
        }
    };
    let outcome = match tool {
        "read" => check_read(tools, &principal.tabs, params).await,
        _ if !principal.role.can_write() => Err(ToolError::PermissionDenied(
            "This token has the read role; mcp_write needs a write token".into(),
        )),
        _ => write::check(tools, &principal.tabs, params).await,
    };
    Ok(render(outcome))
}

/// Reads have no side effects, so the check runs the read itself and measures the real reply.
async fn check_read(
    tools: &ToolState,
    tabs: &Coverage,
    params: &Map<String, Value>,
) -> Result<(String, usize), ToolError> {
    let query = ReadQuery::parse(params)?;
    let _shared = tools.writes.read().await;
    let reply = query.run(tools, tabs).await?;
    Ok((reply, query.max_items()))
}

fn render(outcome: Result<(String, usize), ToolError>) -> String {
    let (reply, max_items) = match outcome {
        Ok(ok) => ok,
        Err(e) => return format!("valid:false|errors:1\n{}", e.line()),
    };
    let tokens = estimate_tokens(&reply);
    let mut warnings = Vec::new();
    if max_items > LARGE_MAX_ITEMS {
        warnings.push(format!(
            "warning|LARGE_RESPONSE|max_items={max_items} may return large response"
        ));
    } else if tokens > LARGE_TOKENS {
        warnings.push(format!(
            "warning|LARGE_RESPONSE|reply of about {tokens} tokens"
        ));
    }
    if warnings.is_empty() {
        format!("valid:true|warnings:0|estimated_tokens:{tokens}")
    } else {
        format!(
            "valid:true|warnings:{}\n{}\nestimated_tokens:{tokens}",
            warnings.len(),
            warnings.join("\n")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_the_reference() {
        assert_eq!(
            render(Ok(("x".repeat(1800), 20))),
            "valid:true|warnings:0|estimated_tokens:450"
        );
        assert_eq!(
            render(Ok(("x".repeat(10_000), 100))),
            "valid:true|warnings:1\nwarning|LARGE_RESPONSE|max_items=100 may return large response\nestimated_tokens:2500"
        );
        assert_eq!(
            render(Err(ToolError::TabNotFound("nonexistent".into()))),
            "valid:false|errors:1\nerror|TAB_NOT_FOUND|Tab not found: nonexistent"
        );
    }
}
