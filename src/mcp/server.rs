//! The rmcp server handler. `tools/list` and `tools/call` are filtered by the role of the token on
//! the request itself (not the session): a read token never sees `mcp_write`, and calling it fails
//! exactly like calling a tool that does not exist.

use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    Implementation, InitializeRequestParams, InitializeResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SubscribeRequestMethod, SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Map;
use tracing::Instrument;

use crate::logging::field;

use super::catalog::{READ_TOOL, VALIDATE_TOOL, WRITE_TOOL, allowed, tools_for};
use super::{ToolState, chatgpt, presentation, read, resources, structured, validate, write};
use crate::auth::Principal;

const INSTRUCTIONS: &str = "Clipboard history from CopyQ. Start with mcp_read mode=tree (scope=all for every \
tab). Managed tabs are addressed relative to mcp/ (info, заметки, workspace/...); external tabs by their exact \
name with scope=external, read-only. Indices start at 0 (newest) and shift after writes.";

#[derive(Debug, Clone)]
pub struct CopyqMcp {
    tools: Arc<ToolState>,
    /// Stateful sessions (`[server] sessions`): without them `resources/subscribe` has no stream
    /// to notify on.
    sessions: bool,
}

impl CopyqMcp {
    pub fn new(tools: Arc<ToolState>) -> Self {
        Self {
            tools,
            sessions: false,
        }
    }

    pub fn with_sessions(mut self, sessions: bool) -> Self {
        self.sessions = sessions;
        self
    }
}

/// The principal the auth middleware put on this HTTP request.
fn principal(ctx: &RequestContext<RoleServer>) -> Option<&Principal> {
    ctx.extensions
        .get::<http::request::Parts>()?
        .extensions
        .get::<Principal>()
}

/// The error rmcp's own router gives for a tool that does not exist.
fn no_such_tool() -> McpError {
    McpError::invalid_params("tool not found", None)
}

impl ServerHandler for CopyqMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .build(),
        )
        .with_server_info(Implementation::new("copyq-mcp", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        ctx.peer.set_peer_info(request.clone());
        let mut info = self.negotiate_initialize(&request)?;
        presentation::server_info(&mut info.server_info, &info.protocol_version);
        resources::watch::advertise(&mut info, self.sessions);
        Ok(info)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let mut tools = principal(&ctx)
            .map(|p| tools_for(p.role))
            .unwrap_or_default();
        if self.tools.surface.chatgpt_tools && !tools.is_empty() {
            tools.extend(chatgpt::tools());
        }
        if self.structured(&ctx) {
            structured::add_schemas(&mut tools);
        }
        presentation::tool_icons(&ctx, &mut tools);
        // The list depends on the caller's role, so no shared cache may keep it.
        Ok(ListToolsResult::with_all_items(tools).with_cache_scope(CacheScope::Private))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.call(request, principal(&ctx), self.structured(&ctx))
            .await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let Some(principal) = principal(&ctx) else {
            return Ok(ListResourcesResult::default().with_cache_scope(CacheScope::Private));
        };
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        resources::list(&self.tools, principal, cursor).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(resources::templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let Some(principal) = principal(&ctx) else {
            return Err(McpError::resource_not_found("Resource not found", None));
        };
        Ok(resources::read(&self.tools, principal, &request.uri)
            .await?
            .into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if !self.sessions {
            return Err(McpError::method_not_found::<SubscribeRequestMethod>());
        }
        resources::watch::subscribe(&self.tools, &request.uri, &ctx).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        resources::watch::unsubscribe(&self.tools, &request.uri, &ctx);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(resources::watch::accepted(requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        resources::watch::listen(&self.tools, context).await
    }
}

impl CopyqMcp {
    /// `tools/call`, for the caller `principal` (the bearer check's, `None` if it left none),
    /// with structured content when `structured`: rmcp's handler and the direct path
    /// ([`crate::http`]'s) both answer through it, so the two cannot differ.
    pub async fn call(
        &self,
        request: CallToolRequestParams,
        principal: Option<&Principal>,
        structured: bool,
    ) -> Result<CallToolResponse, McpError> {
        let Some(principal) = principal else {
            return Err(no_such_tool());
        };
        let chatgpt = self.tools.surface.chatgpt_tools && chatgpt::is_tool(&request.name);
        if !allowed(principal.role, &request.name) && !chatgpt {
            tracing::info!(
                tool = %field(&request.name),
                sub = %field(&principal.subject),
                role = ?principal.role,
                "tool refused: none by that name for this token"
            );
            return Err(no_such_tool());
        }
        let args = request.arguments.unwrap_or_default();
        let mode = args
            .get("mode")
            .and_then(|m| m.as_str())
            .unwrap_or("")
            .to_owned();
        let span = tracing::info_span!(
            "tool",
            tool = %field(&request.name),
            mode = %field(&mode),
            sub = %field(&principal.subject),
            role = ?principal.role
        );
        let started = Instant::now();
        let outcome = self
            .dispatch(&request.name, principal, &args)
            .instrument(span.clone())
            .await;
        let _enter = span.enter();
        if let Some(metrics) = &self.tools.metrics {
            let code = outcome.as_ref().map_or_else(|e| e.code(), |_| "ok");
            metrics.tool_call(&request.name, &mode, code, started.elapsed());
        }
        let json = structured
            .then(|| {
                structured::content(
                    &request.name,
                    &args,
                    outcome.as_ref().map(|r| r.text.as_str()),
                )
            })
            .flatten();
        let result = match outcome {
            Ok(reply) => {
                tracing::info!(
                    ms = started.elapsed().as_millis() as u64,
                    reply_bytes = reply.text.len(),
                    images = reply.images.len(),
                    "ok"
                );
                CallToolResult::success(reply.blocks())
            }
            Err(e) => {
                tracing::info!(
                    ms = started.elapsed().as_millis() as u64,
                    code = e.code(),
                    "tool error"
                );
                CallToolResult::error(vec![ContentBlock::text(e.line())])
            }
        };
        Ok(match json {
            Some(value) => structured::attach(result, value),
            None => result,
        }
        .into())
    }

    /// Whether this request gets structured results: on in `[mcp]` and known to its version.
    fn structured(&self, ctx: &RequestContext<RoleServer>) -> bool {
        super::protocol::of(ctx).is_some_and(|version| self.structured_at(&version))
    }

    /// Whether a request speaking `version` gets them.
    pub fn structured_at(&self, version: &ProtocolVersion) -> bool {
        self.tools.surface.structured && structured::supported_at(version)
    }

    async fn dispatch(
        &self,
        name: &str,
        principal: &Principal,
        args: &Map<String, serde_json::Value>,
    ) -> Result<super::Reply, super::ToolError> {
        match name {
            READ_TOOL => read::call(&self.tools, &principal.tabs, args).await,
            WRITE_TOOL => write::call(&self.tools, principal, args)
                .await
                .map(Into::into),
            VALIDATE_TOOL => validate::call(&self.tools, principal, args)
                .await
                .map(Into::into),
            chatgpt::SEARCH_TOOL | chatgpt::FETCH_TOOL => {
                chatgpt::call(&self.tools, &principal.tabs, name, args)
                    .await
                    .map(Into::into)
            }
            _ => unreachable_tool(name).map(Into::into),
        }
    }
}

/// `allowed` has already refused unknown names; keep a tool error rather than a panic regardless.
fn unreachable_tool(name: &str) -> Result<String, super::ToolError> {
    Err(super::ToolError::InvalidParam(format!(
        "Unknown tool '{}'",
        name.escape_debug()
    )))
}
