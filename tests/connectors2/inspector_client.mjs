#!/usr/bin/env node
// The MCP Inspector CLI 2.x against the gateway, for tests/connectors_misc.rs: one real
//     mcp-inspector --cli URL --method ... --format json [--header "Authorization: Bearer T"]
// run per OP (the Inspector CLI makes one request per invocation, as a person would type them).
// Run this with Node 22 from tests/connectors2/install.sh (Inspector 2.x needs Node >= 22.19),
// usually through run.sh, which gives it a private HOME and BROWSER.
//
//   inspector_client.mjs --url URL (--token T | --oauth) OP...
//   OP := list | call NAME JSON_ARGS | sleep SECS
//
// --oauth: no header. The first OP runs the Inspector's own interactive OAuth (discovery,
// dynamic registration, PKCE, a loopback callback server on --callback-url, here a free port);
// without a TTY it only opens a browser with MCP_AUTO_OPEN_ENABLED=true (set here), through the
// `open` npm package, whose bundled xdg-open runs $BROWSER. The tokens go to the Inspector's
// shared store ($HOME/.mcp-inspector/storage/oauth.json). Every later OP passes
// --stored-auth-only: it must get by with the stored tokens (refreshing them if they expired) and
// may never start a second login.
//
// One JSON line on stdout: {"client": "inspector X", "results": [R...]} with R per OP:
// list -> {"tools": [names]}; call -> {"isError": bool, "text": "..."}; a CLI error (nothing on
// stdout) -> {"cliError": "<code>", "message": "...", "exit": N}; sleep -> {"slept": SECS}.
// Non-zero exit only on bad usage or when an invocation cannot be run or parsed.
// Options: --timeout SECS per invocation (default 90).

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const clientsDir = process.env.CLIENTS_DIR || resolve(here, '..', '..', 'target', 'clients');
const pkg = join(clientsDir, 'connectors2', 'npm', 'node_modules', '@modelcontextprotocol', 'inspector');
const launcher = join(pkg, 'clients', 'launcher', 'build', 'index.js');
if (!existsSync(launcher)) {
  process.stderr.write(`inspector_client.mjs: no Inspector under ${pkg}; run tests/connectors2/install.sh\n`);
  process.exit(2);
}
const version = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')).version;

function usage(msg) {
  process.stderr.write(`inspector_client.mjs: ${msg}\nusage: inspector_client.mjs --url URL (--token T | --oauth) [--timeout SECS] OP...\n`);
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
    JSON.parse(argv[i + 2]);
    ops.push(['call', argv[i + 1], argv[i + 2]]);
    i += 2;
  } else if (a === 'sleep' && i + 1 < argv.length) {
    ops.push(['sleep', Number(argv[++i])]);
  } else {
    usage(`bad argument ${JSON.stringify(a)}`);
  }
}
if (!opts.url || (opts.token === null) === !opts.oauth) usage('need --url and exactly one of --token / --oauth');

async function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

const callbackUrl = `http://127.0.0.1:${await freePort()}/oauth/callback`;

function lastJson(text) {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l.startsWith('{'));
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      return JSON.parse(lines[i]);
    } catch {
      // a log line that only looks like JSON
    }
  }
  return null;
}

function inspector(methodArgs, first) {
  const args = [launcher, '--cli', opts.url, ...methodArgs, '--format', 'json'];
  if (opts.token !== null) {
    args.push('--header', `Authorization: Bearer ${opts.token}`);
  } else {
    args.push('--callback-url', callbackUrl);
    if (!first) args.push('--stored-auth-only');
  }
  const env = { ...process.env };
  if (opts.oauth) {
    env.MCP_AUTO_OPEN_ENABLED = 'true';
    // Without a desktop keyring the Inspector keeps tokens in memory only (gone when the
    // invocation ends); the file store keeps them in the private HOME for the next OP.
    env.MCP_INSPECTOR_SECRET_STORE = 'file';
  }
  const r = spawnSync(process.execPath, args, {
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: Number(opts.timeout) * 1000,
    killSignal: 'SIGKILL',
  });
  if (r.error) throw new Error(`inspector ${methodArgs.join(' ')}: ${r.error.message}\n${r.stderr || ''}`);
  return { status: r.status, out: lastJson(r.stdout || ''), err: lastJson(r.stderr || ''), stderr: r.stderr || '', stdout: r.stdout || '' };
}

function fail(what, r) {
  process.stderr.write(`inspector_client.mjs: ${what}: exit ${r.status}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}\n`);
  process.exit(1);
}

const results = [];
let first = true;
for (const op of ops) {
  if (op[0] === 'sleep') {
    await new Promise((r) => setTimeout(r, op[1] * 1000));
    results.push({ slept: op[1] });
    continue;
  }
  const methodArgs = op[0] === 'list'
    ? ['--method', 'tools/list']
    : ['--method', 'tools/call', '--tool-name', op[1], '--tool-args-json', op[2]];
  const r = inspector(methodArgs, first);
  first = false;
  if (r.out && r.out.result) {
    const res = r.out.result;
    if (op[0] === 'list') {
      if (!Array.isArray(res.tools)) fail('tools/list answered without tools', r);
      results.push({ tools: res.tools.map((t) => t.name) });
    } else {
      const text = (res.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
      results.push({ isError: Boolean(res.isError), text });
    }
  } else if (r.err && r.err.error) {
    results.push({ cliError: r.err.error.code ?? null, message: r.err.error.message ?? '', exit: r.status });
  } else {
    fail(`${methodArgs.join(' ')} printed no JSON result or error`, r);
  }
}
process.stdout.write(JSON.stringify({ client: `inspector ${version}`, results }) + '\n');
