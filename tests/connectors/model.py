#!/usr/bin/env python3
"""A scripted stand-in for a model API on loopback, so that Claude Code and Codex make MCP tool calls
through their own MCP clients without any real model.

It speaks two wire formats, each with streaming:
  POST /v1/messages    Anthropic Messages API (Claude Code, via ANTHROPIC_BASE_URL)
  POST /v1/responses   OpenAI Responses API   (Codex, a model provider with wire_api = "responses")

Every request is appended to LOG (one JSON object a line: path and body). The script it plays is
chosen per conversation from the tools it was offered (those whose names end in mcp_read,
mcp_write, mcp_validate):
  --script read    answer with a text naming the tools offered; no tool call
  --script write   call mcp_write {"mode":"add","tab":TAB,"text":TEXT}, then mcp_read
                   {"mode":"item","tab":TAB,"index":0}, then answer "done"
  --script media   (Claude Code) load its resource tools with ToolSearch, list the server's
                   resources, read the resource URI, then mcp_read {"mode":"item","tab":TAB,
                   "index":0} (an image item), then answer "done"
A request offering none of those tools (title generation, quota probes, ...) gets a short text.

  model.py serve --log LOG --port-file FILE --script read|write|media [--tab TAB --text TEXT --uri URI]
  model.py summary LOG     prints what the client sent to the model:
                             tools: <every MCP tool offered, client-side names, sorted, comma-separated>
                             result: <each tool result text fed back, in order, newlines as \\n>
                             listed: / resource: <Claude Code's resource tools' results>
                             image: <each image fed back in a tool result: type, size, sha256>
"""

import argparse
import base64
import hashlib
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OURS = ("mcp_read", "mcp_write", "mcp_validate")


def our_tool(name):
    """The gateway's tool a client-side tool name stands for, or None (mcp__copyq__mcp_read ->
    mcp_read)."""
    for t in OURS:
        if name == t or name.endswith("__" + t) or name.endswith("_" + t) or name.endswith("." + t):
            return t
    return None


def tool_names(body):
    """Client-side names of the tools offered in a request, in either wire format."""
    names = []
    for t in body.get("tools") or []:
        if not isinstance(t, dict):
            continue
        if t.get("name") and t.get("type") != "namespace":
            names.append(t["name"])
        elif isinstance(t.get("function"), dict) and t["function"].get("name"):
            names.append(t["function"]["name"])
        # Responses API namespaces: {"type": "namespace", "name": NS, "tools": [...]}
        for sub in t.get("tools") or []:
            if isinstance(sub, dict) and sub.get("name"):
                names.append(sub["name"] if not t.get("name") else t["name"] + "__" + sub["name"])
    return names


def namespaces(body):
    return {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict) and t.get("type") == "namespace"}


def _text_of(content):
    """The text of a message or tool result; a tool_reference block (what Claude Code's ToolSearch
    returns) counts as its tool's name on a line."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_text_of(c) if isinstance(c, dict) else str(c) for c in content)
    if isinstance(content, dict):
        if content.get("type") == "tool_reference":
            return content.get("tool_name", "") + "\n"
        return content.get("text", "")
    return ""


def tool_calls(body):
    """(call id, tool name) of every tool call the model made so far, in either wire format."""
    out = []
    for m in body.get("messages") or []:  # Anthropic
        if m.get("role") == "assistant" and isinstance(m.get("content"), list):
            for c in m["content"]:
                if isinstance(c, dict) and c.get("type") == "tool_use":
                    out.append((c.get("id"), c.get("name")))
    for item in body.get("input") or []:  # Responses
        if isinstance(item, dict) and item.get("type") == "function_call":
            out.append((item.get("call_id"), item.get("name")))
    return out


def tool_results(body):
    """(tool name, text) of every tool result the client fed back to the model, in order, in
    either wire format."""
    names = dict(tool_calls(body))
    out = []
    for m in body.get("messages") or []:  # Anthropic
        if isinstance(m.get("content"), list):
            for c in m["content"]:
                if isinstance(c, dict) and c.get("type") == "tool_result":
                    out.append((names.get(c.get("tool_use_id")), _text_of(c.get("content"))))
    for item in body.get("input") or []:  # Responses
        if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
            o = item.get("output")
            if isinstance(o, dict):
                o = o.get("content", o)
            out.append((names.get(item.get("call_id")), _text_of(o)))
    return out


def tool_result_images(body):
    """(media type, bytes) of every image a client fed back inside a tool result (Anthropic
    format: {"type": "image", "source": {"type": "base64", ...}})."""
    out = []
    for m in body.get("messages") or []:
        for c in m.get("content") if isinstance(m.get("content"), list) else []:
            if not (isinstance(c, dict) and c.get("type") == "tool_result"):
                continue
            for block in c.get("content") if isinstance(c.get("content"), list) else []:
                src = block.get("source") if isinstance(block, dict) and block.get("type") == "image" else None
                if isinstance(src, dict) and src.get("type") == "base64":
                    out.append((src.get("media_type"), base64.b64decode(src.get("data", ""))))
    return out


def deferred_mcp_tools(body):
    """MCP tool names a client listed as deferred (Claude Code's tool search: only their names are
    in a system message; their schemas come from the ToolSearch tool)."""
    text = "\n".join(_text_of(m.get("content")) for m in body.get("messages") or [] if isinstance(m, dict))
    return sorted(set(re.findall(r"\bmcp__[A-Za-z0-9_-]+__[A-Za-z0-9_-]+", text)) - set(tool_names(body)))


def plan(body, args):
    """('text', TEXT) or ('call', CLIENT_TOOL_NAME, ARGUMENTS) for this turn.

    When the client defers MCP tools behind a ToolSearch tool (Claude Code's default), the model
    first asks it for the copyq tools, as a real model does."""
    names = tool_names(body)
    mine = {our_tool(n): n for n in names if our_tool(n)}
    made = [name for _, name in tool_calls(body)]
    if args.script == "media":
        return plan_media(body, args, names, mine, made)
    if not mine:
        if "ToolSearch" in names and "ToolSearch" not in made and deferred_mcp_tools(body):
            return ("call", "ToolSearch", {"query": "+copyq", "max_results": 10})
        return ("text", "ok")
    if args.script == "read":
        return ("text", "tools offered: " + ",".join(sorted(mine)))
    made = {our_tool(n) for n in made}
    if "mcp_write" not in made and "mcp_write" in mine:
        return ("call", mine["mcp_write"], {"mode": "add", "tab": args.tab, "text": args.text})
    if "mcp_read" not in made and "mcp_read" in mine:
        return ("call", mine["mcp_read"], {"mode": "item", "tab": args.tab, "index": 0})
    return ("text", "done")


RESOURCE_TOOLS = ("ListMcpResourcesTool", "ReadMcpResourceTool")


def plan_media(body, args, names, mine, made):
    """The media script: Claude Code's own resource tools (deferred behind ToolSearch like MCP
    tools), then an image item through mcp_read."""
    if "ToolSearch" in names and "ToolSearch" not in made:
        return ("call", "ToolSearch", {"query": "select:" + ",".join(RESOURCE_TOOLS) + ",mcp__copyq__mcp_read"})
    if "ListMcpResourcesTool" not in made and "ListMcpResourcesTool" in names:
        return ("call", "ListMcpResourcesTool", {"server": "copyq"})
    if "ReadMcpResourceTool" not in made and "ReadMcpResourceTool" in names:
        return ("call", "ReadMcpResourceTool", {"server": "copyq", "uri": args.uri})
    if "mcp_read" in mine and mine["mcp_read"] not in made:
        return ("call", mine["mcp_read"], {"mode": "item", "tab": args.tab, "index": 0})
    return ("text", "done")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "stand-in-model"

    def log_message(self, *a):  # quiet
        pass

    def _read_body(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        if self.headers.get("content-encoding") == "zstd":
            return {"_undecoded": "zstd"}
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {"_raw": raw.decode("utf-8", "replace")}

    def _record(self, body):
        with self.server.lock, open(self.server.args.log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"method": self.command, "path": self.path, "body": body}) + "\n")

    def _json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._record(None)
        path = self.path.split("?")[0]
        if path.endswith("/models"):
            return self._json(200, {"object": "list", "data": [], "models": []})
        self._json(404, {"error": {"type": "not_found", "message": path}})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        body = self._read_body()
        self._record(body)
        path = self.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            return self._json(200, {"input_tokens": 10})
        if path.endswith("/messages"):
            return self.anthropic(body)
        if path.endswith("/responses"):
            return self.openai_responses(body)
        self._json(404, {"error": {"type": "not_found", "message": path}})

    # ---- event streams -------------------------------------------------------
    def _sse_start(self):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def _event(self, name, data):
        self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def _next_id(self, prefix):
        with self.server.lock:
            self.server.seq += 1
            return f"{prefix}{self.server.seq:04d}"

    # ---- Anthropic Messages --------------------------------------------------
    def anthropic(self, body):
        step = plan(body, self.server.args)
        model = body.get("model", "stand-in")
        msg_id = self._next_id("msg_standin_")
        usage = {"input_tokens": 10, "output_tokens": 5}
        if step[0] == "text":
            block = {"type": "text", "text": step[1]}
            stop = "end_turn"
        else:
            block = {"type": "tool_use", "id": self._next_id("toolu_standin_"), "name": step[1], "input": step[2]}
            stop = "tool_use"
        if not body.get("stream"):
            return self._json(200, {"id": msg_id, "type": "message", "role": "assistant", "model": model,
                                    "content": [block], "stop_reason": stop, "stop_sequence": None,
                                    "usage": usage})
        self._sse_start()
        self._event("message_start", {"type": "message_start", "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}})
        if block["type"] == "text":
            self._event("content_block_start", {"type": "content_block_start", "index": 0,
                                                "content_block": {"type": "text", "text": ""}})
            self._event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                "delta": {"type": "text_delta", "text": block["text"]}})
        else:
            self._event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
                "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}})
            self._event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(block["input"])}})
        self._event("content_block_stop", {"type": "content_block_stop", "index": 0})
        self._event("message_delta", {"type": "message_delta",
                                      "delta": {"stop_reason": stop, "stop_sequence": None},
                                      "usage": {"output_tokens": 5}})
        self._event("message_stop", {"type": "message_stop"})

    # ---- OpenAI Responses ----------------------------------------------------
    def openai_responses(self, body):
        step = plan(body, self.server.args)
        resp_id = self._next_id("resp_standin_")
        if step[0] == "text":
            item = {"type": "message", "id": self._next_id("msg_standin_"), "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": step[1], "annotations": []}]}
        else:
            item = {"type": "function_call", "id": self._next_id("fc_standin_"), "status": "completed",
                    "call_id": self._next_id("call_standin_"), "name": step[1],
                    "arguments": json.dumps(step[2])}
            if "__" in step[1] and step[1].rsplit("__", 1)[0] in namespaces(body):
                # A tool inside a namespace (Codex: "mcp__<server>"): called by its own name.
                item["namespace"], item["name"] = step[1].rsplit("__", 1)
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        resp = {"id": resp_id, "object": "response", "status": "completed", "model": body.get("model"),
                "output": [item], "usage": usage}
        if not body.get("stream"):
            return self._json(200, resp)
        self._sse_start()
        created = dict(resp, status="in_progress", output=[])
        self._event("response.created", {"type": "response.created", "response": created})
        self._event("response.output_item.added", {"type": "response.output_item.added",
                                                    "output_index": 0, "item": item})
        if item["type"] == "message":
            self._event("response.output_text.delta", {"type": "response.output_text.delta",
                                                        "item_id": item["id"], "output_index": 0,
                                                        "content_index": 0, "delta": step[1]})
        self._event("response.output_item.done", {"type": "response.output_item.done",
                                                   "output_index": 0, "item": item})
        self._event("response.completed", {"type": "response.completed", "response": resp})


def serve(args):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.args = args
    srv.lock = threading.Lock()
    srv.seq = 0
    open(args.log, "a").close()
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.replace(args.port_file + ".tmp", args.port_file)
    srv.serve_forever()


CODEX_PREAMBLE = re.compile(r"^Wall time: [0-9.]+ seconds\nOutput:")
IMAGE_SAVED = re.compile(r"\[Image: source: [^\]]*\]")


def summary(log):
    """What the client told the model, from the request log:
      deferred: MCP tools listed by name only (Claude Code's tool search), first request
      tools:    every MCP tool offered with its schema (client-side names: mcp__<server>__<tool>),
                one line per distinct set over all requests that offered any
      searched: the MCP tools a ToolSearch call returned
      result:   each result of a gateway tool fed back (from the last request, which carries
                the whole conversation); Codex's own "Wall time: ... Output:" preamble is dropped."""
    offered, deferred, last = [], None, None
    with open(log, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            body = r.get("body") or {}
            if not isinstance(body, dict) or not body.get("tools"):
                continue
            if deferred is None and deferred_mcp_tools(body):
                deferred = deferred_mcp_tools(body)
            mcp = sorted(n for n in tool_names(body) if n.startswith("mcp__"))
            if mcp:
                offered.append(",".join(mcp))
            if mcp or deferred:
                last = body
    if deferred:
        print("deferred: " + ",".join(deferred))
    for o in dict.fromkeys(offered):
        print("tools: " + o)
    for name, res in tool_results(last or {}):
        if name == "ListMcpResourcesTool":
            try:
                uris = [r.get("uri") for r in json.loads(res)]
            except ValueError:
                uris = [res]
            print("listed: " + ",".join(str(u) for u in uris))
        elif name == "ReadMcpResourceTool":
            try:
                res = "\n".join(c.get("text", "") for c in json.loads(res).get("contents") or [])
            except (ValueError, AttributeError):
                pass
            print("resource: " + res.replace("\\", "\\\\").replace("\n", "\\n"))
        elif name == "ToolSearch":
            found = sorted(set(re.findall(r"\bmcp__[A-Za-z0-9_-]+__[A-Za-z0-9_-]+", res)))
            print("searched: " + ",".join(found))
        elif our_tool(name or ""):
            res = CODEX_PREAMBLE.sub("", res)
            # Claude Code appends where it saved an image it fed back: a path of this run's HOME.
            res = IMAGE_SAVED.sub("[Image: source: PATH]", res)
            print("result: " + res.replace("\\", "\\\\").replace("\n", "\\n"))
    for media_type, data in tool_result_images(last or {}):
        print(f"image: {media_type} {len(data)}B sha256={hashlib.sha256(data).hexdigest()}")


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--log", required=True)
    s.add_argument("--port-file", required=True)
    s.add_argument("--script", choices=["read", "write", "media"], required=True)
    s.add_argument("--uri", default="")
    s.add_argument("--tab", default="workspace/connectors")
    s.add_argument("--text", default="written by a connector")
    m = sub.add_parser("summary")
    m.add_argument("log")
    a = p.parse_args()
    if a.cmd == "serve":
        serve(a)
    else:
        summary(a.log)


if __name__ == "__main__":
    sys.exit(main())
