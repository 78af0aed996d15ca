#!/usr/bin/env node
// mcp-remote (npm, a stdio MCP server that proxies to a remote Streamable HTTP server) against
// the gateway, for tests/connectors_misc.rs. This script is the stdio MCP client on the other
// side: @modelcontextprotocol/sdk's Client + StdioClientTransport, spawning
//     node mcp-remote/dist/proxy.js URL --transport http-only [--header "Authorization:Bearer T"]
// the way Claude Desktop's config would. Run it with Node 22 from tests/connectors2/install.sh
// (usually through run.sh, which sets HOME, MCP_REMOTE_CONFIG_DIR and BROWSER).
//
//   mcp_remote_client.mjs --url URL (--token T | --oauth) OP...
//   OP := list | call NAME JSON_ARGS | sleep SECS
//
// --oauth: no header; mcp-remote runs its own OAuth flow (discovery, dynamic registration, PKCE,
// a loopback callback server) and opens the authorize URL with the `open` npm package, whose
// bundled xdg-open runs $BROWSER when no desktop is detected. Tokens live in
// $MCP_REMOTE_CONFIG_DIR.
// All OPs run in ONE session, in order: a `sleep` past the access-token lifetime makes mcp-remote
// refresh before its next request succeeds.
//
// One JSON line on stdout: {"client": "mcp-remote X", "results": [R...]} with R per OP:
// list -> {"tools": [names]}; call -> {"isError": bool, "text": "..."} or, for a JSON-RPC error,
// {"protocolError": "...", "code": int}; sleep -> {"slept": SECS}.
// Non-zero exit (and mcp-remote's stderr tail) when the client or the proxy fails.
// Options: --timeout SECS per request, including the first connect with its OAuth (default 90).

import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const clientsDir = process.env.CLIENTS_DIR || resolve(here, '..', '..', 'target', 'clients');
const modules = join(clientsDir, 'connectors2', 'npm', 'node_modules');
const sdkRoot = join(modules, '@modelcontextprotocol', 'sdk');
const proxy = join(modules, 'mcp-remote', 'dist', 'proxy.js');
if (!existsSync(proxy) || !existsSync(join(sdkRoot, 'package.json'))) {
  process.stderr.write(`mcp_remote_client.mjs: mcp-remote or the sdk missing under ${modules}; run tests/connectors2/install.sh\n`);
  process.exit(2);
}
const load = (p) => import(pathToFileURL(join(sdkRoot, 'dist', 'esm', p)).href);
const { Client } = await load('client/index.js');
const { StdioClientTransport } = await load('client/stdio.js');
const { McpError } = await load('types.js');
const remoteVersion = JSON.parse(readFileSync(join(modules, 'mcp-remote', 'package.json'), 'utf8')).version;

function usage(msg) {
  process.stderr.write(`mcp_remote_client.mjs: ${msg}\nusage: mcp_remote_client.mjs --url URL (--token T | --oauth) [--timeout SECS] OP...\n`);
  process.exit(2);
}

const argv = process.argv.slice(2);
const opts = { url: null, token: null, oauth: false, timeout: 90 };
const ops = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--url' || a === '--token' || a === '--timeout') {
    if (argv[i + 1] === undefined) usage(`${a} needs a value`);
    opts[a.slice(2)] = argv[++i];
  } else if (a === '--oauth') {
    opts.oauth = true;
  } else if (a === 'list') {
    ops.push(['list']);
  } else if (a === 'call' && i + 2 < argv.length) {
    ops.push(['call', argv[i + 1], JSON.parse(argv[i + 2])]);
    i += 2;
  } else if (a === 'sleep' && i + 1 < argv.length) {
    ops.push(['sleep', Number(argv[++i])]);
  } else {
    usage(`bad argument ${JSON.stringify(a)}`);
  }
}
if (!opts.url || (opts.token === null) === !opts.oauth) usage('need --url and exactly one of --token / --oauth');
const timeoutMs = Number(opts.timeout) * 1000;

// mcp-remote's OAuth callback listens on a port it derives from the server URL (3335 plus the
// first 16 bits of the URL's MD5, modulo 45816). Chromium refuses to load a few ports
// (net::ERR_UNSAFE_PORT): when the gateway's port, random in these tests, makes the callback land
// on one, the approval's redirect never arrives (seen: http://localhost:34171/mcp -> 4045). A
// person seeing that in their browser passes mcp-remote a port (its second argument), as this does
// then, and only then.
const CHROMIUM_UNSAFE = new Set([3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668,
  6669, 6679, 6697, 10080]);
function callbackPort(url) {
  const hash = createHash('md5').update(url).digest('hex');
  return 3335 + (parseInt(hash.slice(0, 4), 16) % 45816);
}
const args = [proxy, opts.url];
let port = callbackPort(opts.url);
if (opts.oauth && CHROMIUM_UNSAFE.has(port)) {
  while (CHROMIUM_UNSAFE.has(port)) port += 1;
  args.push(String(port));
}
args.push('--transport', 'http-only');
if (opts.token !== null) args.push('--header', `Authorization:Bearer ${opts.token}`);
const stderrPath = join(process.env.CONNECTORS2_STATE || '.', 'mcp-remote.stderr');
const stderrLog = createWriteStream(stderrPath, { flags: 'a' });
const transport = new StdioClientTransport({
  command: process.execPath,
  args,
  env: { ...process.env },
  stderr: 'pipe',
});
transport.stderr?.pipe(stderrLog);

function tail() {
  try {
    return readFileSync(stderrPath, 'utf8').split('\n').slice(-40).join('\n');
  } catch {
    return '';
  }
}

const client = new Client({ name: 'copyq-mcp connectors2 stdio driver', version: '1.0.0' });
const results = [];
let status = 0;
try {
  await client.connect(transport, { timeout: timeoutMs });
  for (const op of ops) {
    if (op[0] === 'list') {
      const r = await client.listTools(undefined, { timeout: timeoutMs });
      results.push({ tools: r.tools.map((t) => t.name) });
    } else if (op[0] === 'call') {
      try {
        const r = await client.callTool({ name: op[1], arguments: op[2] }, undefined, { timeout: timeoutMs });
        const text = (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
        results.push({ isError: Boolean(r.isError), text });
      } catch (e) {
        if (!(e instanceof McpError)) throw e;
        results.push({ protocolError: e.message, code: e.code });
      }
    } else {
      await new Promise((r) => setTimeout(r, op[1] * 1000));
      results.push({ slept: op[1] });
    }
  }
  process.stdout.write(JSON.stringify({ client: `mcp-remote ${remoteVersion}`, results }) + '\n');
} catch (e) {
  process.stderr.write(`mcp_remote_client.mjs: FAILED: ${e?.stack || e}\n--- mcp-remote stderr (tail) ---\n${tail()}\n`);
  status = 1;
} finally {
  await client.close().catch(() => {});
}
stderrLog.end();
process.exit(status);
