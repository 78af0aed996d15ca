#!/usr/bin/env node
// MCP resources through @modelcontextprotocol/sdk's Client over Streamable HTTP with a bearer
// token, for end-to-end tests: the same commands and output as py_resources.py (without
// --modern: this SDK speaks up to 2025-11-25, so `watch` is resources/subscribe).
//
//   ts_resources.mjs --url URL --token TOKEN (list | caps | templates | read URI | watch URI)
//
// Run with the Node 22 in $CLIENTS_DIR/node22; the sdk comes from $CLIENTS_DIR/npm/node_modules.
// A JSON-RPC error: {"protocolError": "<message>", "code": <int>} (exit 0); a transport failure
// exits 1 with the error on stderr.

import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const clientsDir = process.env.CLIENTS_DIR || resolve(here, '..', '..', 'target', 'clients');
const sdkRoot = join(clientsDir, 'npm', 'node_modules', '@modelcontextprotocol', 'sdk');
if (!existsSync(join(sdkRoot, 'package.json'))) {
  process.stderr.write(`ts_resources.mjs: no sdk under ${sdkRoot}; run tests/clients/install.sh\n`);
  process.exit(2);
}
const load = (p) => import(pathToFileURL(join(sdkRoot, 'dist', 'esm', p)).href);
const { Client } = await load('client/index.js');
const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');
const { McpError, ResourceUpdatedNotificationSchema } = await load('types.js');

const argv = process.argv.slice(2);
const opts = { timeout: 30 };
const rest = [];
for (let i = 0; i < argv.length; i++) {
  if (['--url', '--token', '--timeout'].includes(argv[i])) opts[argv[i].slice(2)] = argv[++i];
  else rest.push(argv[i]);
}
const [command, uri] = rest;
const timeoutMs = Number(opts.timeout) * 1000;
const emit = (payload) => process.stdout.write(JSON.stringify(payload) + '\n');
const fail = (err) => {
  process.stderr.write(`ts_resources.mjs: transport failure: ${err?.stack ?? err}\n`);
  process.exit(1);
};
setTimeout(() => fail(new Error(`timed out after ${opts.timeout}s`)), timeoutMs).unref();

const pick = (o, keys) => Object.fromEntries(keys.map((k) => [k, o[k] ?? null]));
const requestInit = { headers: { Authorization: `Bearer ${opts.token}` } };
const transport = new StreamableHTTPClientTransport(new URL(opts.url), { requestInit });
const client = new Client({ name: 'copyq-mcp-ts-resources', version: '0.0.0' });

async function run() {
  if (command === 'list') {
    const resources = [];
    let cursor;
    let pages = 0;
    do {
      const page = await client.listResources(cursor ? { cursor } : undefined, { timeout: timeoutMs });
      pages += 1;
      for (const r of page.resources) resources.push(pick(r, ['uri', 'name', 'title', 'mimeType']));
      cursor = page.nextCursor;
    } while (cursor);
    return { resources, pages };
  }
  if (command === 'caps') {
    return { resources: client.getServerCapabilities()?.resources ?? null };
  }
  if (command === 'templates') {
    const page = await client.listResourceTemplates(undefined, { timeout: timeoutMs });
    return { resourceTemplates: page.resourceTemplates.map((t) => pick(t, ['uriTemplate', 'name', 'mimeType'])) };
  }
  if (command === 'read') {
    const res = await client.readResource({ uri }, { timeout: timeoutMs });
    return { contents: res.contents.map((c) => pick(c, ['uri', 'mimeType', 'text'])) };
  }
  if (command === 'watch') {
    const updated = new Promise((done) => {
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        if (n.params.uri === uri) done();
      });
    });
    await client.subscribeResource({ uri }, { timeout: timeoutMs });
    emit({ watching: uri });
    await updated;
    return { updated: uri };
  }
  throw new Error(`unknown command ${command}`);
}

try {
  await client.connect(transport, { timeout: timeoutMs });
  let payload;
  try {
    payload = await run();
  } catch (err) {
    if (!(err instanceof McpError)) throw err;
    payload = { protocolError: err.message.replace(/^MCP error -?\d+: /, ''), code: err.code };
  }
  emit(payload);
  await transport.terminateSession();
  await client.close();
} catch (err) {
  fail(err);
}
process.exit(0);
