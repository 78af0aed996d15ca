# A small MCP client in curl for the shell tests (the container, the Windows .exe): set `base` (the
# gateway's URL), `token` and `MCP_HEADERS` (a file for the last reply's headers), then
# `mcp_start NAME` (initialize + initialized), `mcp BODY` (one POST; the body on stdout) and
# `mcp_call ID TOOL ARGS` (a tool's reply as JSON). The caller defines `die`.

mcp() {   # mcp BODY: POST /mcp with the token (and the session, once there is one); body on stdout
    local hdr=(-H "content-type: application/json" -H "accept: application/json, text/event-stream"
        -H "authorization: Bearer $token")
    [[ -n ${MCP_SESSION:-} ]] && hdr+=(-H "mcp-session-id: $MCP_SESSION")
    curl -sS --fail -D "$MCP_HEADERS" "${hdr[@]}" --data "$1" "$base/mcp"
}

json_of() { sed -n 's/^data: //p; /^{/p' | head -n 1; }   # a JSON reply or an SSE event's data

mcp_start() {   # mcp_start CLIENT-NAME: a session, initialized
    MCP_SESSION=
    local init
    init=$(mcp "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-03-26\",\"capabilities\":{},\"clientInfo\":{\"name\":\"$1\",\"version\":\"1\"}}}") ||
        die "initialize failed: $init"
    MCP_SESSION=$(tr -d '\r' <"$MCP_HEADERS" | sed -n 's/^mcp-session-id: *//Ip' | head -n 1)
    mcp '{"jsonrpc":"2.0","method":"notifications/initialized"}' >/dev/null || die "notifications/initialized failed"
}

mcp_call() {   # mcp_call ID TOOL ARGS: the tools/call reply as JSON, or die when none came
    local reply
    reply=$(mcp "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":$3}}") ||
        die "tools/call $2 failed: $reply"
    json_of <<<"$reply"
}
