//! The protocol version a request speaks, for the features only some versions define
//! (structured results, icons). A stateless POST has no session to remember `initialize`, so
//! the `MCP-Protocol-Version` header the client sends on every later request stands in for it.

use rmcp::RoleServer;
use rmcp::model::ProtocolVersion;
use rmcp::service::RequestContext;

/// The version from the request's `_meta` or its session, else from its header; `None` when
/// neither names one (the spec then has the server assume 2025-03-26).
pub fn of(ctx: &RequestContext<RoleServer>) -> Option<ProtocolVersion> {
    ctx.protocol_version().or_else(|| {
        let header = ctx
            .extensions
            .get::<http::request::Parts>()?
            .headers
            .get("mcp-protocol-version")?
            .to_str()
            .ok()?;
        serde_json::from_value(serde_json::Value::String(header.to_owned())).ok()
    })
}

/// Whether the request speaks `min` or a later version.
pub fn at_least(ctx: &RequestContext<RoleServer>, min: &ProtocolVersion) -> bool {
    of(ctx).is_some_and(|v| v >= *min)
}
