#!/usr/bin/env node
// Benchmark: `tools/call` read of a 4 KiB file over stdio, driven by the official TypeScript MCP
// SDK client (@modelcontextprotocol/sdk, pinned in interop/package.json), against
//   ours      mcp-pruner stdio --root DIR                       tool `read` {path: "file.txt"}
//   baseline  @modelcontextprotocol/server-filesystem DIR       tool `read_text_file` {path: ABS}
// (server-filesystem is a devDependency here; install both with `npm ci --prefix interop`).
//
// One client per server, 50 warm-up calls, then BENCH_CALLS (2000) sequential calls, each timed
// with process.hrtime.bigint(). The servers alternate (ours, baseline, ours, ...) for
// BENCH_ROUNDS (3) rounds each; the best round of each (highest calls/s) is reported.
// The client never calls tools/list, so it validates no output schema for either server: the
// figures are the SDK's request path, the stdio transport and the server.
//
// Usage: node interop/bench_read.mjs
//   MCP_PRUNER_BIN=/path/to/mcp-pruner BENCH_CALLS=5000 BENCH_ROUNDS=5 node interop/bench_read.mjs
// Last line: `bench_read: ours N calls/s, server-filesystem M calls/s, ratio R.RRx`.
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
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
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
  await conn.client.close().catch(() => {});
  lat.sort();
  return { cps: CALLS / (wallMs / 1000), p50: percentile(lat, 50), p99: percentile(lat, 99) };
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

  const ours = {
    name: 'ours',
    label: 'mcp-pruner read',
    command: OURS_BIN,
    args: ['stdio', '--root', dir],
    tool: 'read',
    arguments: { path: 'file.txt' },
  };
  const base = {
    name: 'server-filesystem',
    label: `server-filesystem ${fsPkg.version} read_text_file`,
    command: process.execPath,
    args: [fsEntry, dir],
    tool: 'read_text_file',
    arguments: { path: file },
  };

  console.log(`bench_read: node ${process.version}, @modelcontextprotocol/sdk ${pkgVersion(join(HERE, 'node_modules/@modelcontextprotocol/sdk'))}, ` +
    `server-filesystem ${fsPkg.version}, mcp-pruner ${OURS_BIN}`);
  console.log(`bench_read: ${FILE_BYTES}-byte file, ${WARMUP} warm-up + ${CALLS} sequential calls per round, ${ROUNDS} rounds each, alternating`);

  await verify(ours, (t) => t === text);
  await verify(base, (t) => t.includes(text));

  const results = { ours: [], 'server-filesystem': [] };
  for (let r = 1; r <= ROUNDS; r++) {
    for (const server of [ours, base]) {
      const res = await round(server);
      results[server.name].push(res);
      console.log(`  round ${r} ${server.name.padEnd(17)} ${res.cps.toFixed(0).padStart(6)} calls/s  p50 ${res.p50.toFixed(3)} ms  p99 ${res.p99.toFixed(3)} ms`);
    }
  }
  const best = (rs) => rs.reduce((a, b) => (b.cps > a.cps ? b : a));
  const bo = best(results.ours);
  const bb = best(results['server-filesystem']);

  const rows = [
    ['server', 'tool', 'calls/s', 'p50 ms', 'p99 ms'],
    [ours.label.split(' ')[0], ours.tool, bo.cps.toFixed(0), bo.p50.toFixed(3), bo.p99.toFixed(3)],
    [`server-filesystem ${fsPkg.version}`, base.tool, bb.cps.toFixed(0), bb.p50.toFixed(3), bb.p99.toFixed(3)],
  ];
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  console.log(`\nbest of ${ROUNDS} rounds (highest calls/s):`);
  for (const row of rows) console.log('  ' + row.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  '));
  const ratio = bo.cps / bb.cps;
  console.log(`  ratio calls/s ours/baseline: ${ratio.toFixed(2)}x; p50 ours/baseline: ${(bo.p50 / bb.p50).toFixed(2)}`);
  console.log(`bench_read: ours ${bo.cps.toFixed(0)} calls/s, server-filesystem ${bb.cps.toFixed(0)} calls/s, ratio ${ratio.toFixed(2)}x`);
}

main().then(
  () => process.exit(0),
  (e) => die(e?.stack || String(e)),
);
