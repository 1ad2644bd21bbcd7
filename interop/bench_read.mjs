#!/usr/bin/env node
// Benchmark: `tools/call` read of a 4 KiB file over stdio, driven by the official TypeScript MCP
// SDK client (@modelcontextprotocol/sdk, pinned in interop/package.json), against
//   ours            mcp-pruner stdio --root DIR --ledger TMP/ledger.sqlite3   (the defaults: ledger on)
//   ours-no-ledger  mcp-pruner stdio --root DIR --no-ledger
//                   both: tool `read` {path: "file.txt"}
//   baseline        @modelcontextprotocol/server-filesystem DIR  tool `read_text_file` {path: ABS}
// (server-filesystem is a devDependency here; install both with `npm ci --prefix interop`).
//
// One client per server and round, 50 warm-up calls, then BENCH_CALLS (2000) sequential calls,
// each timed with process.hrtime.bigint(); then, on our two servers, BENCH_PROBES (500) MCP `ping`s
// and `health` calls for the per-call floor. After one uncounted warm-up round of each, the servers
// run in interleaved rounds (BENCH_ROUNDS, default 5), the order rotating each round so no server
// always follows the same one. Printed:
// every round, then per server the median calls/s and its spread (min-max, and (max-min)/median),
// median p50/p99, the ratios of the medians to the baseline, and the ledger's share of a read
// (1 - ours/ours-no-ledger, on the medians and as the median of each round's pair).
// The client never calls tools/list, so it validates no output schema for either server: the
// figures are the SDK's request path, the stdio transport and the server.
//
// Usage: node interop/bench_read.mjs
//   MCP_PRUNER_BIN=/path/to/mcp-pruner BENCH_CALLS=5000 BENCH_ROUNDS=7 node interop/bench_read.mjs
// Last line: `bench_read: ours N calls/s, ours --no-ledger L calls/s, server-filesystem M calls/s,
// ratio R.RRx, ledger share S.S%` (medians).
// Exits non-zero if a server fails to start, a call errors or a result lacks the file's text.

import { mkdtempSync, writeFileSync, readFileSync, realpathSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const REPO = join(HERE, '..');
const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const PROBES = Number(process.env.BENCH_PROBES ?? 500);
const WARMUP = 50;
const FILE_BYTES = 4096;
const CALL_TIMEOUT_MS = 30_000;
const START_TIMEOUT_MS = 30_000;

const OURS_BIN = process.env.MCP_PRUNER_BIN || join(REPO, 'target/release/mcp-pruner');
const FS_PKG = join(HERE, 'node_modules/@modelcontextprotocol/server-filesystem');

function die(msg) {
  console.error(`bench_read: ${msg}`);
  process.exit(1);
}

function pkgVersion(dir) {
  try {
    return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
  } catch {
    return '?';
  }
}

// ~4 KiB of Rust-like source, exactly FILE_BYTES bytes, ending in a newline.
function sourceText(bytes) {
  const lines = ['use std::collections::HashMap;', 'use std::io::{self, BufRead};', ''];
  for (let i = 0; ; i++) {
    const block = [
      `/// Returns the weight of entry ${i}, or the default when it is missing.`,
      `pub fn weight_${i}(map: &HashMap<String, u64>, key: &str) -> u64 {`,
      `    let base = map.get(key).copied().unwrap_or(${(i * 37) % 101});`,
      `    if base > ${100 + i} {`,
      `        return base.saturating_sub(${i + 1}) / 2;`,
      '    }',
      `    base.wrapping_mul(${i + 3})`,
      '}',
      '',
    ];
    lines.push(...block);
    if (lines.join('\n').length > bytes) break;
  }
  let text = '';
  for (const line of lines) {
    if (text.length + line.length + 1 > bytes) break;
    text += line + '\n';
  }
  // Pad with one comment line so the file is exactly `bytes` bytes long.
  const room = bytes - text.length;
  if (room >= 4) text += '//' + ' pad'.repeat(Math.ceil(room / 4)).slice(0, room - 3) + '\n';
  else text += '\n'.repeat(room);
  if (Buffer.byteLength(text) !== bytes) die(`internal: test file is ${Buffer.byteLength(text)} bytes`);
  return text;
}

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

async function connect(server) {
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => {
    if (stderr.length < 16_384) stderr += chunk;
  });
  const client = new Client({ name: 'mcp-pruner-bench-read', version: '0.0.0' });
  try {
    await withTimeout(client.connect(transport), START_TIMEOUT_MS, `${server.name}: initialize`);
  } catch (e) {
    await transport.close().catch(() => {});
    die(`${server.name} failed to start (${server.command} ${server.args.join(' ')}): ${e.message}` +
      (stderr ? `\n--- stderr ---\n${stderr}` : ''));
  }
  return { client, transport, stderr: () => stderr };
}

async function call(conn, server) {
  let res;
  try {
    res = await conn.client.callTool(
      { name: server.tool, arguments: server.arguments },
      undefined,
      { timeout: CALL_TIMEOUT_MS },
    );
  } catch (e) {
    die(`${server.name}: ${server.tool} failed: ${e.message}` +
      (conn.stderr() ? `\n--- stderr ---\n${conn.stderr()}` : ''));
  }
  if (res.isError) die(`${server.name}: ${server.tool} returned isError: ${JSON.stringify(res).slice(0, 500)}`);
  return res;
}

function percentile(sorted, p) {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

async function round(server) {
  const conn = await connect(server);
  for (let i = 0; i < WARMUP; i++) await call(conn, server);
  const lat = new Float64Array(CALLS);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) {
    const s = process.hrtime.bigint();
    await call(conn, server);
    lat[i] = Number(process.hrtime.bigint() - s) / 1e6;
  }
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  lat.sort();
  const out = { cps: CALLS / (wallMs / 1000), p50: percentile(lat, 50), p99: percentile(lat, 99) };
  if (server.probes && PROBES > 0) {
    out.ping = await probe(PROBES, () => conn.client.ping());
    out.health = await probe(PROBES, () => call(conn, { ...server, tool: 'health', arguments: {} }));
  }
  await conn.client.close().catch(() => {});
  return out;
}

// p50 (ms) of `n` sequential calls of `f`.
async function probe(n, f) {
  const lat = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const s = process.hrtime.bigint();
    await f();
    lat[i] = Number(process.hrtime.bigint() - s) / 1e6;
  }
  lat.sort();
  return percentile(lat, 50);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function verify(server, check) {
  const conn = await connect(server);
  const res = await call(conn, server);
  await conn.client.close().catch(() => {});
  const text = res.content?.[0]?.type === 'text' ? res.content[0].text : undefined;
  if (typeof text !== 'string') die(`${server.name}: no text content: ${JSON.stringify(res).slice(0, 500)}`);
  if (!check(text)) die(`${server.name}: returned text is not the file's (${text.length} chars): ${JSON.stringify(text.slice(0, 200))}…`);
}

async function main() {
  if (!Number.isInteger(CALLS) || CALLS < 1) die(`BENCH_CALLS must be a positive integer, got ${process.env.BENCH_CALLS}`);
  if (!Number.isInteger(ROUNDS) || ROUNDS < 1) die(`BENCH_ROUNDS must be a positive integer, got ${process.env.BENCH_ROUNDS}`);
  if (!existsSync(OURS_BIN)) die(`mcp-pruner binary not found: ${OURS_BIN} (cargo build --release, or set MCP_PRUNER_BIN)`);
  const fsPkg = JSON.parse(readFileSync(join(FS_PKG, 'package.json'), 'utf8').toString() || '{}');
  const fsBin = typeof fsPkg.bin === 'string' ? fsPkg.bin : Object.values(fsPkg.bin ?? {})[0];
  const fsEntry = fsBin ? join(FS_PKG, fsBin) : undefined;
  if (!fsEntry || !existsSync(fsEntry)) die(`server-filesystem not installed under ${FS_PKG} (run npm ci --prefix interop)`);

  // realpath: server-filesystem resolves symlinks and checks them against the allowed directory.
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'mcp-pruner-bench-read-')));
  const text = sourceText(FILE_BYTES);
  const file = join(dir, 'file.txt');
  writeFileSync(file, text);
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

  const ledgerDir = mkdtempSync(join(tmpdir(), 'mcp-pruner-bench-ledger-'));
  process.on('exit', () => rmSync(ledgerDir, { recursive: true, force: true }));
  const ours = {
    name: 'ours',
    label: 'mcp-pruner (defaults, ledger on)',
    command: OURS_BIN,
    args: ['stdio', '--root', dir, '--ledger', join(ledgerDir, 'ledger.sqlite3')],
    tool: 'read',
    arguments: { path: 'file.txt' },
    probes: true,
  };
  const oursOff = { ...ours, name: 'ours-no-ledger', label: 'mcp-pruner --no-ledger', args: ['stdio', '--root', dir, '--no-ledger'] };
  const base = {
    name: 'server-filesystem',
    label: `server-filesystem ${fsPkg.version} read_text_file`,
    command: process.execPath,
    args: [fsEntry, dir],
    tool: 'read_text_file',
    arguments: { path: file },
  };
  const servers = [ours, oursOff, base];

  console.log(`bench_read: node ${process.version}, @modelcontextprotocol/sdk ${pkgVersion(join(HERE, 'node_modules/@modelcontextprotocol/sdk'))}, ` +
    `server-filesystem ${fsPkg.version}, mcp-pruner ${OURS_BIN}`);
  console.log(`bench_read: ${FILE_BYTES}-byte file, ${WARMUP} warm-up + ${CALLS} sequential calls per round, ${ROUNDS} interleaved rounds (order rotating), ${PROBES} ping/health probes on ours`);

  await verify(ours, (t) => t === text);
  await verify(oursOff, (t) => t === text);
  await verify(base, (t) => t.includes(text));

  // One uncounted round of each server first: the client's JIT and the page cache warm up on it,
  // not on whichever server happens to run first.
  for (const server of servers) await round(server);

  const results = Object.fromEntries(servers.map((s) => [s.name, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < servers.length; k++) {
      const server = servers[(r + k) % servers.length];
      const res = await round(server);
      results[server.name].push(res);
      const extra = res.ping !== undefined ? `  ping p50 ${res.ping.toFixed(3)} ms  health p50 ${res.health.toFixed(3)} ms` : '';
      console.log(`  round ${r + 1} ${server.name.padEnd(17)} ${res.cps.toFixed(0).padStart(6)} calls/s  p50 ${res.p50.toFixed(3)} ms  p99 ${res.p99.toFixed(3)} ms${extra}`);
    }
  }

  const summary = {};
  for (const s of servers) {
    const rs = results[s.name];
    const cps = rs.map((x) => x.cps);
    const med = median(cps);
    summary[s.name] = {
      cps: med,
      min: Math.min(...cps),
      max: Math.max(...cps),
      spread: (Math.max(...cps) - Math.min(...cps)) / med,
      p50: median(rs.map((x) => x.p50)),
      p99: median(rs.map((x) => x.p99)),
      ping: s.probes ? median(rs.map((x) => x.ping)) : undefined,
      health: s.probes ? median(rs.map((x) => x.health)) : undefined,
    };
  }
  const fmt = (v) => (v === undefined ? '-' : v.toFixed(3));
  const rows = [['server', 'tool', 'calls/s med', 'min-max', 'spread', 'read p50 ms', 'p99 ms', 'ping p50', 'health p50']];
  for (const s of servers) {
    const m = summary[s.name];
    rows.push([s.name, s.tool, m.cps.toFixed(0), `${m.min.toFixed(0)}-${m.max.toFixed(0)}`, `${(m.spread * 100).toFixed(1)}%`,
      fmt(m.p50), fmt(m.p99), fmt(m.ping), fmt(m.health)]);
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  console.log(`\nmedians over ${ROUNDS} interleaved rounds:`);
  for (const row of rows) console.log('  ' + row.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  '));
  const mo = summary.ours, ml = summary['ours-no-ledger'], mb = summary['server-filesystem'];
  const ratio = mo.cps / mb.cps;
  const share = 1 - mo.cps / ml.cps;
  const pairShare = median(results.ours.map((x, i) => 1 - x.cps / results['ours-no-ledger'][i].cps));
  console.log(`  calls/s ours/baseline ${ratio.toFixed(2)}x, ours-no-ledger/baseline ${(ml.cps / mb.cps).toFixed(2)}x; p50 ours/baseline ${(mo.p50 / mb.p50).toFixed(2)}`);
  console.log(`  ledger share of a read: ${(share * 100).toFixed(1)}% on the medians, ${(pairShare * 100).toFixed(1)}% median of the rounds' pairs`);
  console.log(`bench_read: ours ${mo.cps.toFixed(0)} calls/s, ours --no-ledger ${ml.cps.toFixed(0)} calls/s, server-filesystem ${mb.cps.toFixed(0)} calls/s, ratio ${ratio.toFixed(2)}x, ledger share ${(share * 100).toFixed(1)}%`);
}

main().then(
  () => process.exit(0),
  (e) => die(e?.stack || String(e)),
);
