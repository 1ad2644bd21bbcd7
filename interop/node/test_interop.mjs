#!/usr/bin/env node
// Interop checks of mcp-pruner against the official TypeScript MCP SDK
// (@modelcontextprotocol/sdk, pinned in interop/package.json).
//
// Transports:
//   stdio  StdioClientTransport spawns `mcp-pruner stdio --root TMP`
//   http   StreamableHTTPClientTransport against a `mcp-pruner serve --port 0` child
//
// Usage: node test_interop.mjs --bin PATH/TO/mcp-pruner [--results FILE] [--transport stdio|http|all]
//
// Every check is recorded as pass / fail / skip with a detail, printed as it runs,
// and written as JSON to --results for interop/run.sh.

import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync, readFileSync, existsSync, rmSync, createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

function sdkVersion() {
  try {
    const url = new URL('../node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url);
    return JSON.parse(readFileSync(url, 'utf8')).version;
  } catch {
    return '?';
  }
}
const SDK_VERSION = sdkVersion();
const LANG = 'node';
const IMMEDIATE_CANCEL_TRIES = Number(process.env.INTEROP_IMMEDIATE_CANCEL_TRIES ?? 4);
// Server logs (stdio stderr, serve stdout/stderr); run.sh points this at interop/results/logs.
const LOG_DIR = process.env.INTEROP_LOG_DIR || mkdtempSync(join(tmpdir(), 'mcp-pruner-interop-logs-'));
mkdirSync(LOG_DIR, { recursive: true });
const EXPECTED_TOOLS = ['read', 'bash', 'grep', 'prune_text', 'recover_text', 'health'];

// ----------------------------------------------------------------------------- helpers

const rows = [];
function record(transport, check, status, detail = '') {
  rows.push({ lang: LANG, transport, check, status, detail });
  let line = `[${LANG}/${transport}] ${status.toUpperCase().padEnd(4)} ${check}`;
  if (detail && status !== 'pass') line += ` -- ${detail}`;
  console.log(line);
}

class CheckFailed extends Error {}
function expect(cond, msg) {
  if (!cond) throw new CheckFailed(msg);
}
function short(v, n = 300) {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s === undefined ? String(s) : s.length <= n ? s : s.slice(0, n) + '…';
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function withTimeout(promise, ms, what) {
  let t;
  return Promise.race([
    promise,
    new Promise((_, rej) => {
      t = setTimeout(() => rej(new CheckFailed(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(t));
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return e.code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.split(') ')[1][0] !== 'Z'; // a zombie is dead
  } catch {
    return false;
  }
}

async function waitForFile(path, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (existsSync(path)) {
      const s = readFileSync(path, 'utf8').trim();
      if (s) return s;
    }
    await sleep(50);
  }
  throw new CheckFailed(`${path} not written within ${ms} ms`);
}

async function waitFor(pred, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (pred()) return true;
    await sleep(25);
  }
  return pred();
}

function makeRoot() {
  const root = mkdtempSync(join(tmpdir(), 'mcp-pruner-interop-node-'));
  let notes = '';
  for (let i = 1; i <= 40; i++) notes += `line ${i}: the quick brown fox\n`;
  writeFileSync(join(root, 'notes.txt'), notes);
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'src', 'main.rs'), 'fn main() {\n    let needle = "interop-needle";\n    println!("{}", needle);\n}\n');
  writeFileSync(join(root, 'src', 'lib.rs'), 'pub fn other() {}\n');
  return root;
}

const textOf = (r) => (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');
// The structured result as a program sees it: metadata in _meta["mcp-pruner/result"], plus
// structuredContent when output schemas are on; seed 001's tools put their result JSON in the text.
function structured(r) {
  let sc = r._meta?.['mcp-pruner/result'];
  if (!sc) {
    try { sc = JSON.parse(textOf(r)); } catch { sc = undefined; }
  }
  sc = { ...(sc || {}), ...(r.structuredContent || {}) };
  expect(Object.keys(sc).length > 0, `no structured result: ${short(r)}`);
  return sc;
}

// Watch the wire: every message sent (requests, notifications) and received (responses),
// so checks can see request ids, raw tools/list entries and late responses the SDK drops.
function tap(transport) {
  const wire = { sent: [], received: [] };
  const origSend = transport.send.bind(transport);
  transport.send = async (msg, opts) => {
    wire.sent.push(msg);
    return origSend(msg, opts);
  };
  const origOnMessage = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    wire.received.push({ msg, at: Date.now() });
    return origOnMessage?.(msg, extra);
  };
  return wire;
}

// ----------------------------------------------------------------------------- transports

async function startServe(bin, root) {
  const child = spawn(bin, ['serve', '--port', '0', '--root', root], { stdio: ['ignore', 'pipe', 'pipe'] });
  const log = createWriteStream(join(LOG_DIR, 'node-http.server.log'));
  child.stderr.pipe(log);
  const rl = createInterface({ input: child.stdout });
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('serve did not report mcp_pruner.ready within 20s')), 20000);
    child.on('exit', (code) => reject(new Error(`serve exited early (${code})`)));
    rl.on('line', (line) => {
      log.write(line + '\n');
      try {
        const ev = JSON.parse(line);
        if (ev.event === 'mcp_pruner.ready') {
          clearTimeout(timer);
          resolve(ev.data.port);
        }
      } catch {
        /* not JSON */
      }
    });
  });
  return { child, port };
}

// ----------------------------------------------------------------------------- checks

async function runTransport(transportName, bin) {
  const root = makeRoot();
  let serve = null;
  let client = null;
  const state = {};

  async function check(name, fn) {
    try {
      const detail = await withTimeout(fn(), 30000, name);
      record(transportName, name, 'pass', detail || '');
    } catch (e) {
      record(transportName, name, 'fail', e instanceof CheckFailed ? e.message : `${e?.name}: ${short(String(e?.message ?? e), 400)}`);
      if (!(e instanceof CheckFailed) && process.env.INTEROP_VERBOSE) console.error(e);
    }
  }

  try {
    let transport;
    if (transportName === 'stdio') {
      transport = new StdioClientTransport({ command: bin, args: ['stdio', '--root', root], stderr: 'pipe' });
      const errlog = createWriteStream(join(LOG_DIR, 'node-stdio.server.log'));
      transport.stderr?.pipe(errlog);
    } else {
      serve = await startServe(bin, root);
      transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${serve.port}/mcp`));
    }
    client = new Client({ name: 'mcp-pruner-interop-node', version: '0.0.0' });
    const errors = [];
    client.onerror = (e) => errors.push(e);

    await check('initialize', async () => {
      await client.connect(transport);
      state.wire = tap(transport);
      const info = client.getServerVersion();
      const caps = client.getServerCapabilities();
      expect(info?.name === 'mcp-pruner', `serverInfo.name=${info?.name}`);
      expect(caps?.tools, 'capabilities.tools missing');
      if (transportName === 'http') expect(transport.sessionId, 'no Mcp-Session-Id issued at initialize');
      state.initialized = true;
      return `protocolVersion=${transport.protocolVersion ?? '(stdio)'}`;
    });
    if (!state.initialized) return;
    const wire = state.wire;
    const lastRequestId = (method, name) => {
      for (let i = wire.sent.length - 1; i >= 0; i--) {
        const m = wire.sent[i];
        if (m.id !== undefined && m.method === method && (name === undefined || m.params?.name === name)) return m.id;
      }
      return undefined;
    };

    await check('ping', async () => {
      await client.ping();
    });

    await check('tools/list', async () => {
      const listed = await client.listTools();
      const names = listed.tools.map((t) => t.name);
      const missing = EXPECTED_TOOLS.filter((n) => !names.includes(n));
      expect(missing.length === 0, `missing tools ${missing}; got ${names}`);
      for (const t of listed.tools) expect(t.inputSchema?.type === 'object', `${t.name}: inputSchema.type != object`);
      const sdkKeeps = listed.tools.some((t) => 'schemaVersion' in t);
      const id = lastRequestId('tools/list');
      const raw = wire.received.find((r) => r.msg.id === id)?.msg?.result;
      expect(raw && Array.isArray(raw.tools), 'raw tools/list result not captured');
      const lacking = raw.tools.filter((t) => EXPECTED_TOOLS.includes(t.name) && !('schemaVersion' in t && 'toolingVersion' in t)).map((t) => t.name);
      expect(lacking.length === 0, `tools without schemaVersion/toolingVersion: ${lacking}`);
      return `${names.length} tools; schemaVersion/toolingVersion ${sdkKeeps ? 'exposed by the SDK' : 'checked on the raw wire result (SDK strips them)'}`;
    });

    await check('tool read', async () => {
      const r = await client.callTool({ name: 'read', arguments: { path: 'notes.txt', offset: 2, limit: 3 } });
      expect(!r.isError, `isError: ${short(textOf(r))}`);
      const sc = structured(r);
      expect(r.structuredContent === undefined, 'the model must read the text once: no structuredContent by default');
      expect(sc.tool === 'read', `tool=${sc.tool}`);
      expect(textOf(r).includes('line 2: the quick brown fox'), `text=${short(textOf(r))}`);
      expect(!textOf(r).includes('line 5:'), 'limit=3 not honoured');
      expect(sc.total_lines === 40, `total_lines=${sc.total_lines}`);
      expect(sc.start_line === 2 && sc.end_line === 4, `start/end=${sc.start_line}/${sc.end_line}`);
      expect(textOf(r).includes('line 3:'), 'text content lacks the file lines');
    });

    await check('tool bash', async () => {
      const r = await client.callTool({ name: 'bash', arguments: { cmd: 'echo hello-$NAME; echo oops >&2', env: { NAME: 'node' } } });
      expect(!r.isError, `isError: ${short(textOf(r))}`);
      const sc = structured(r);
      expect(sc.exit_code === 0, `exit_code=${sc.exit_code}`);
      expect(textOf(r).endsWith('\nhello-node\n[stderr]\noops\n'), `text=${JSON.stringify(textOf(r))}`);
      expect(textOf(r).includes('hello-node'), 'text content lacks stdout');
      const r2 = await client.callTool({ name: 'bash', arguments: { cmd: 'exit 3' } });
      expect(r2.isError === true, 'exit 3 did not give isError: true');
      const sc2 = structured(r2);
      expect(sc2.exit_code === 3 || sc2.error?.code, `exit 3 result: ${short(sc2)}`);
    });

    await check('tool grep', async () => {
      const r = await client.callTool({ name: 'grep', arguments: { pattern: 'interop-needle', paths: ['.'] } });
      expect(!r.isError, `isError: ${short(textOf(r))}`);
      const sc = structured(r);
      expect(sc.match_count === 1, `match_count=${sc.match_count}`);
      expect(/^src\/main\.rs:2:\d+: /.test(textOf(r)), `text=${short(textOf(r))}`);
    });

    await check('tool prune_text', async () => {
      let text = '';
      for (let i = 1; i < 200; i++) text += `INFO step ${i} ok\n`;
      text += 'ERROR disk full on /dev/sda1\n';
      for (let i = 200; i < 260; i++) text += `INFO step ${i} ok\n`;
      const r = await client.callTool({
        name: 'prune_text',
        arguments: { text, goal_hint: 'why did the job fail? find the error', source_type: 'logs' },
      });
      expect(!r.isError, `isError: ${short(textOf(r))}`);
      const sc = structured(r);
      expect(typeof sc.prune_id === 'string' && sc.prune_id, `prune_id=${sc.prune_id}`);
      expect((sc.pruned_text || '').includes('ERROR disk full'), 'pruned_text lost the ERROR line');
      expect(sc.stats?.original_lines === 260, `stats.original_lines=${sc.stats?.original_lines}`);
      state.pruneId = sc.prune_id;
      return `kept ${sc.stats?.kept_lines}/${sc.stats?.original_lines}`;
    });

    await check('tool recover_text', async () => {
      const r = await client.callTool({ name: 'bash', arguments: { cmd: 'seq 1 3000', max_output_bytes: 1024 } });
      expect(!r.isError, `bash isError: ${short(textOf(r))}`);
      const ref = structured(r).artifactRef;
      expect(typeof ref === 'string' && ref, `no artifactRef on truncated bash output: ${short(structured(r))}`);
      const rr = await client.callTool({
        name: 'recover_text',
        arguments: { prune_id: ref, ranges: [{ start_line: 1500, end_line: 1502 }], include_line_numbers: false },
      });
      expect(!rr.isError, `recover isError: ${short(textOf(rr))}`);
      const sc = structured(rr);
      expect(sc.raw_text === '1500\n1501\n1502\n', `raw_text=${JSON.stringify(sc.raw_text)}`);
      expect(sc.metadata?.prune_id === ref && sc.metadata?.total_lines === 3000, `metadata=${short(sc.metadata)}`);
      if (state.pruneId) {
        const rp = await client.callTool({ name: 'recover_text', arguments: { prune_id: state.pruneId, include_line_numbers: false } });
        expect(!rp.isError, `recover(prune_text id) isError: ${short(textOf(rp))}`);
        expect((structured(rp).raw_text || '').includes('ERROR disk full'), 'recovered text lacks the original');
      }
    });

    await check('resources (templates/list/read prune://)', async () => {
      const tpl = await client.listResourceTemplates();
      expect(tpl.resourceTemplates.some((t) => t.uriTemplate === 'prune://{prune_id}'), `templates=${short(tpl.resourceTemplates)}`);
      const r = await client.callTool({ name: 'bash', arguments: { cmd: 'seq 1 2000', max_output_bytes: 1024 } });
      const ref = structured(r).artifactRef;
      expect(typeof ref === 'string' && ref, 'no artifactRef');
      const listed = await client.listResources();
      const uris = listed.resources.map((x) => x.uri);
      expect(uris.includes(`prune://${ref}`), `prune://${ref} not in resources/list (${uris.length} listed)`);
      const rr = await client.readResource({ uri: `prune://${ref}` });
      const text = rr.contents?.[0]?.text ?? '';
      expect(text.split('\n')[1999] === '2000', `resource text does not hold the full output: ${short(rr.contents)}`);
      return `${uris.length} resources`;
    });

    await check('tool health', async () => {
      const r = await client.callTool({ name: 'health', arguments: {} });
      expect(!r.isError, `isError: ${short(textOf(r))}`);
      const sc = structured(r);
      expect(sc.status === 'healthy', `status=${sc.status}`);
      expect(sc.server === 'mcp-pruner', `server=${sc.server}`);
      expect(Number.isInteger(sc.store?.entries), `store=${short(sc.store)}`);
    });

    await check('progress', async () => {
      const got = [];
      const r = await client.callTool(
        { name: 'bash', arguments: { cmd: 'for i in $(seq 1 12); do echo progress-line-$i; sleep 0.25; done' } },
        undefined,
        { onprogress: (p) => got.push(p) },
      );
      expect(!r.isError, `isError: ${short(textOf(r))}`);
      expect(got.length > 0, 'no notifications/progress received');
      const withMsg = got.filter((p) => p.message);
      expect(withMsg.length > 0, `progress notifications carry no message: ${short(got)}`);
      expect(got.some((p) => (p.message || '').includes('progress-line-')), `messages lack output lines: ${short(got)}`);
      const vals = got.map((p) => p.progress);
      expect(vals.every((v, i) => i === 0 || v > vals[i - 1]), `progress not increasing: ${vals}`);
      return `${got.length} notifications, first=${JSON.stringify(withMsg[0].message)}`;
    });

    await check('cancel (AbortController -> notifications/cancelled, CANCELLED result, process killed)', async () => {
      const pidfile = join(root, 'cancel.pid');
      const childfile = join(root, 'cancel.child');
      const ac = new AbortController();
      const cmd = `echo $$ > ${pidfile}; sleep 30 & echo $! > ${childfile}; wait`;
      const call = client.callTool({ name: 'bash', arguments: { cmd, timeout_ms: 60000 } }, undefined, { signal: ac.signal });
      const settled = call.then(
        (v) => ({ ok: true, v }),
        (e) => ({ ok: false, e }),
      );
      const shellPid = Number(await waitForFile(pidfile, 10000));
      const childPid = Number(await waitForFile(childfile, 10000));
      expect(pidAlive(childPid), 'sleep child not running before cancel');
      const id = lastRequestId('tools/call', 'bash');
      const t0 = Date.now();
      ac.abort('interop test');
      const out = await settled;
      expect(!out.ok, `aborted callTool resolved instead of rejecting: ${short(out.v)}`);
      const sent = wire.sent.find((m) => m.method === 'notifications/cancelled' && m.params?.requestId === id);
      expect(sent, `SDK sent no notifications/cancelled for request ${id}`);
      // The SDK drops the late response; read the server's answer off the wire.
      const answered = await waitFor(() => wire.received.some((r) => r.msg.id === id), 5000);
      const gone = await waitFor(() => !pidAlive(shellPid) && !pidAlive(childPid), Math.max(0, 5000 - (Date.now() - t0)));
      const elapsed = (Date.now() - t0) / 1000;
      expect(gone, `process group still alive ${elapsed.toFixed(1)}s after cancel`);
      expect(answered, 'server sent no response for the cancelled request within 5s');
      const resp = wire.received.find((r) => r.msg.id === id);
      const res = resp.msg.result;
      expect(res?.isError === true, `cancelled call response not isError: ${short(resp.msg)}`);
      expect(res?._meta?.['mcp-pruner/result']?.error?.code === 'CANCELLED', `error.code=${res?._meta?.['mcp-pruner/result']?.error?.code}`);
      const respDelay = (resp.at - t0) / 1000;
      expect(respDelay < 5, `CANCELLED result after ${respDelay.toFixed(2)}s`);
      await client.ping(); // the session survives
      return `CANCELLED result after ${respDelay.toFixed(2)}s, processes gone after ${elapsed.toFixed(2)}s`;
    });

    await check('cancel immediately after send', async () => {
      // A client may cancel right after sending (user pressed Esc): abort as soon as the
      // request is on the wire. The server must answer CANCELLED, not run it to its timeout.
      // HOME points at the temp root so the login shell skips the machine's profile.
      const lost = [];
      const waits = [];
      for (let k = 0; k < IMMEDIATE_CANCEL_TRIES; k++) {
        const ac = new AbortController();
        const n = wire.sent.length;
        const p = client
          .callTool({ name: 'bash', arguments: { cmd: 'sleep 30', timeout_ms: 8000, env: { HOME: root } } }, undefined, { signal: ac.signal })
          .catch(() => {});
        await waitFor(() => wire.sent.slice(n).some((m) => m.method === 'tools/call'), 5000);
        const id = wire.sent.slice(n).find((m) => m.method === 'tools/call')?.id;
        ac.abort('interop immediate cancel');
        await p;
        const t0 = Date.now();
        await waitFor(() => wire.received.some((r) => r.msg.id === id), 5000);
        const resp = wire.received.find((r) => r.msg.id === id)?.msg;
        const code = resp?.result?._meta?.['mcp-pruner/result']?.error?.code;
        if (code !== 'CANCELLED') lost.push(`try ${k + 1}: id ${id} -> ${code ?? 'no response within 5s'}`);
        else waits.push(((Date.now() - t0) / 1000).toFixed(2));
      }
      expect(lost.length === 0, `${lost.length}/${IMMEDIATE_CANCEL_TRIES} immediate cancels ignored: ${lost.join('; ')}`);
      return `${IMMEDIATE_CANCEL_TRIES}/${IMMEDIATE_CANCEL_TRIES} CANCELLED; waits ${waits.join(', ')}s`;
    });
  } catch (e) {
    record(transportName, 'session', 'fail', `${e?.name}: ${short(String(e?.message ?? e), 400)}`);
  } finally {
    try {
      await client?.close();
    } catch {
      /* ignore */
    }
    if (serve) {
      serve.child.kill('SIGTERM');
      await waitFor(() => serve.child.exitCode !== null || serve.child.signalCode !== null, 5000);
      if (serve.child.exitCode === null && serve.child.signalCode === null) serve.child.kill('SIGKILL');
    }
    rmSync(root, { recursive: true, force: true });
  }
}

// ----------------------------------------------------------------------------- main

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : def;
};
const bin = opt('--bin');
if (!bin) {
  console.error('usage: test_interop.mjs --bin PATH [--results FILE] [--transport stdio|http|all]');
  process.exit(2);
}
const which = opt('--transport', 'all');
for (const t of which === 'all' ? ['stdio', 'http'] : [which]) {
  await runTransport(t, bin);
}
const p = rows.filter((r) => r.status === 'pass').length;
const f = rows.filter((r) => r.status === 'fail').length;
const s = rows.filter((r) => r.status === 'skip').length;
const resultsFile = opt('--results');
if (resultsFile) writeFileSync(resultsFile, JSON.stringify(rows, null, 1));
console.log(`node suite (@modelcontextprotocol/sdk ${SDK_VERSION}): ${p} passed, ${f} failed, ${s} skipped`);
process.exit(f ? 1 : 0);
