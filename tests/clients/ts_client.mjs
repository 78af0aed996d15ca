#!/usr/bin/env node
// Tiny MCP client CLI over Streamable HTTP with a bearer token, for end-to-end tests,
// built on @modelcontextprotocol/sdk's Client + StreamableHTTPClientTransport.
// Same contract as py_client.py. Run it with the Node 22 that install.sh puts in
// $CLIENTS_DIR/node22; the sdk is loaded from $CLIENTS_DIR/npm/node_modules
// (CLIENTS_DIR defaults to <repo>/target/clients).
//
//   ts_client.mjs --url URL --token TOKEN list
//       -> {"tools": [{"name": ..., "title": ..., "description": ..., "annotations": {...}}, ...]}
//   ts_client.mjs --url URL --token TOKEN call NAME JSON_ARGS
//       -> {"isError": bool, "text": "<text content blocks joined with \n>"}
//          plus "structured": <structuredContent> when the server sent one
//   a JSON-RPC error reply from the server (unknown tool, bad params, ...):
//       -> {"protocolError": "<message>", "code": <int or null>}          (exit 0)
//
// One JSON line on stdout. Exit status is non-zero only on a transport failure
// (connection refused, non-2xx HTTP status, timeout, a locally made SDK error);
// the error goes to stderr. A JSON-RPC error body sent with HTTP 400 or 404 counts as
// a protocol error; 401, 403, 5xx and other statuses are transport failures. `title` is the tool's top-level title, falling back
// to annotations.title; null if neither is set.
// Options: --token '' sends no Authorization header; --timeout SECS (default 30);
// --validate lists the tools before a call: the sdk validates a structuredContent against the
// tool's outputSchema only for tools it has listed (a mismatch is then a failure, exit 1).

import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const clientsDir = process.env.CLIENTS_DIR || resolve(here, '..', '..', 'target', 'clients');
const sdkRoot = join(clientsDir, 'npm', 'node_modules', '@modelcontextprotocol', 'sdk');
if (!existsSync(join(sdkRoot, 'package.json'))) {
  process.stderr.write(`ts_client.mjs: no @modelcontextprotocol/sdk under ${sdkRoot}; run tests/clients/install.sh\n`);
  process.exit(2);
}
const load = (p) => import(pathToFileURL(join(sdkRoot, 'dist', 'esm', p)).href);
const { Client } = await load('client/index.js');
const { StreamableHTTPClientTransport, StreamableHTTPError } = await load('client/streamableHttp.js');
const { McpError } = await load('types.js');
const sdkVersion = (await import(pathToFileURL(join(sdkRoot, 'package.json')).href, { with: { type: 'json' } })).default.version;

function usage(msg) {
  process.stderr.write(`ts_client.mjs: ${msg}\nusage: ts_client.mjs --url URL [--token TOKEN] [--timeout SECS] [--validate] (list | call NAME [JSON_ARGS])\n`);
  process.exit(2);
}

// ---- arguments ---------------------------------------------------------------
const argv = process.argv.slice(2);
const opts = { token: '', timeout: 30, validate: false };
const rest = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const eq = a.indexOf('=');
  const [flag, inline] = a.startsWith('--') && eq > 0 ? [a.slice(0, eq), a.slice(eq + 1)] : [a, undefined];
  if (flag === '--url' || flag === '--token' || flag === '--timeout') {
    const v = inline ?? argv[++i];
    if (v === undefined) usage(`${flag} needs a value`);
    opts[flag.slice(2)] = v;
  } else if (a === '--validate') {
    opts.validate = true;
  } else if (a === '-h' || a === '--help') {
    usage('help');
  } else {
    rest.push(a);
  }
}
if (!opts.url) usage('--url is required');
const [command, toolName, jsonArgs = '{}'] = rest;
if (command !== 'list' && command !== 'call') usage('command must be list or call');
if (command === 'call' && !toolName) usage('call needs NAME');
let toolArgs = {};
if (command === 'call') {
  try { toolArgs = JSON.parse(jsonArgs); } catch (e) { usage(`JSON_ARGS is not JSON: ${e.message}`); }
}
const timeoutMs = Number(opts.timeout) * 1000;

// ---- run -----------------------------------------------------------------------
function fail(err, where = '') {
  const detail = err && err.stack ? err.stack : String(err);
  const code = err && err.code !== undefined ? ` (code ${err.code})` : '';
  process.stderr.write(`ts_client.mjs (sdk ${sdkVersion}): transport failure${where}: ${err?.name ?? 'Error'}${code}: ${err?.message ?? err}\n${detail}\n`);
  process.exit(1);
}

const deadline = setTimeout(() => fail(new Error(`timed out after ${opts.timeout}s`)), timeoutMs);
deadline.unref();

const requestInit = opts.token ? { headers: { Authorization: `Bearer ${opts.token}` } } : {};
const transport = new StreamableHTTPClientTransport(new URL(opts.url), { requestInit });
const client = new Client({ name: 'copyq-mcp-ts-test-client', version: '0.0.0' });

// The last JSON-RPC error the server actually sent (one request runs at a time). An
// McpError matching it is a protocol error; any other McpError (request timeout,
// connection closed) was made by the SDK itself and is a transport failure.
let lastServerError = null;

const POST_ERROR_PREFIX = 'Error POSTing to endpoint: ';

function protocolErrorFrom(err) {
  if (err instanceof StreamableHTTPError) {
    if (err.code !== 400 && err.code !== 404) return null; // 401, 403, 5xx, ...: transport failures
    // A JSON-RPC error sent with an HTTP error status (the sdk throws it as an HTTP
    // error): report it as the protocol error it is, as py_client.py does.
    const i = err.message.indexOf(POST_ERROR_PREFIX);
    if (i < 0) return null;
    try {
      const body = JSON.parse(err.message.slice(i + POST_ERROR_PREFIX.length));
      if (body && typeof body.error === 'object' && body.error !== null && 'code' in body.error) {
        const code = body.error.code;
        return { protocolError: String(body.error.message ?? ''), code: Number.isInteger(code) ? code : null };
      }
    } catch { /* not JSON: a transport failure */ }
    return null;
  }
  if (!(err instanceof McpError)) return null;
  const raw = lastServerError;
  if (!raw || raw.code !== err.code) return null;
  return { protocolError: raw.message ?? '', code: Number.isInteger(raw.code) ? raw.code : null };
}

let payload;
try {
  await client.connect(transport, { timeout: timeoutMs });
  const inner = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    if (msg && msg.error && typeof msg.error === 'object' && 'id' in msg) {
      lastServerError = msg.error;
    }
    return inner?.(msg, extra);
  };
  try {
    if (command === 'list') {
      const tools = [];
      let cursor;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: timeoutMs });
        for (const t of page.tools) {
          const annotations = t.annotations ?? {};
          tools.push({
            name: t.name,
            title: t.title ?? annotations.title ?? null,
            description: t.description ?? null,
            annotations,
          });
        }
        cursor = page.nextCursor;
      } while (cursor);
      payload = { tools };
    } else {
      if (opts.validate) await client.listTools(undefined, { timeout: timeoutMs });
      const res = await client.callTool({ name: toolName, arguments: toolArgs }, undefined, { timeout: timeoutMs });
      const text = (res.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('\n');
      payload = { isError: Boolean(res.isError), text };
      if (res.structuredContent !== undefined) payload.structured = res.structuredContent;
    }
  } catch (err) {
    payload = protocolErrorFrom(err);
    if (!payload) throw err;
  }
} catch (err) {
  fail(err);
}

process.stdout.write(JSON.stringify(payload) + '\n');
try {
  await transport.terminateSession(); // DELETE; a 405 is accepted by the sdk
  await client.close();
} catch (err) {
  fail(err, ' while closing the session');
}
process.exit(0);
