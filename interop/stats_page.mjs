// The savings page in a real browser (issue 14): the real `mcp-pruner` binary writes ledger rows
// in a scripted stdio session, `mcp-pruner stats --html` turns them into a page, and headless
// Chromium (driven by playwright-core, no browser download) opens it and checks that both charts
// render: each <svg> is visible, every bar is drawn at the width the report's numbers give (and
// the right colour, counted in the screenshot's pixels), no console error, no script, and no
// request leaves the page. A full-page screenshot is written next to the other results.
//
//   node interop/stats_page.mjs --bin target/debug/mcp-pruner [--chromium /usr/bin/chromium]
//                               [--results interop/results/stats_page]
//
// Run it through `interop/stats_page.sh`, which installs Chromium and playwright-core first.
// Prints one line per check and closes with `stats page: N passed, M failed`; exits 1 on any
// failure.

import { spawn, execFileSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdirSync, mkdtempSync, writeFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { inflateSync } from 'node:zlib';
import { chromium } from 'playwright-core';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, '..');

// ---------------------------------------------------------------------------- arguments
function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}
const BIN = resolve(arg('bin', process.env.MCP_PRUNER_BIN ?? join(REPO, 'target/debug/mcp-pruner')));
const CHROMIUM = arg('chromium', process.env.STATS_PAGE_CHROMIUM ?? '/usr/bin/chromium');
const RESULTS = resolve(arg('results', join(HERE, 'results/stats_page')));
const CALL_TIMEOUT_MS = 120_000;

// ---------------------------------------------------------------------------- check bookkeeping
let passed = 0;
let failed = 0;
/** Records one check: prints `ok - name` or `FAIL - name: detail`. Returns `cond`. */
function check(name, cond, detail = '') {
  if (cond) {
    passed++;
    console.log(`ok - ${name}`);
  } else {
    failed++;
    console.log(`FAIL - ${name}${detail ? `: ${detail}` : ''}`);
  }
  return Boolean(cond);
}
const short = (v) => {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s && s.length > 300 ? `${s.slice(0, 300)}…` : s;
};

// ---------------------------------------------------------------------------- a minimal MCP stdio client
/**
 * Starts `mcp-pruner stdio` and speaks newline-delimited JSON-RPC to it. Raw JSON-RPC rather
 * than an SDK: this check is about the ledger and the page, and the SDK paths are covered by
 * interop/run.sh.
 */
function startServer(args, stderrFile) {
  const env = { ...process.env };
  // test.sh exports MCP_PRUNER_LEDGER for the other suites; this session names its own ledger.
  delete env.MCP_PRUNER_LEDGER;
  delete env.MCP_PRUNER_NO_LEDGER;
  const child = spawn(BIN, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const stderr = [];
  child.stderr.on('data', (d) => stderr.push(d));
  child.stdin.on('error', () => {}); // EPIPE after a crash: reported through `exited` below
  const pending = new Map();
  let nextId = 1;
  createInterface({ input: child.stdout }).on('line', (line) => {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      return; // stdout carries only protocol messages; anything else would fail a check below
    }
    const p = msg.id !== undefined && pending.get(msg.id);
    if (p) {
      pending.delete(msg.id);
      clearTimeout(p.timer);
      p.resolve(msg);
    }
  });
  // If the server dies (or never starts), fail what is in flight at once instead of waiting out
  // each call's timeout.
  const exited = new Promise((res) => {
    const gone = (status) => {
      for (const [id, p] of pending) {
        clearTimeout(p.timer);
        p.reject(new Error(`server gone (${JSON.stringify(status)}) before answering request ${id}`));
      }
      pending.clear();
      res(status);
    };
    child.on('exit', (code, signal) => gone({ code, signal }));
    child.on('error', (e) => gone({ error: e.message }));
  });
  return {
    /** Sends a request and resolves with the whole response message (result or error). */
    request(method, params) {
      const id = nextId++;
      return new Promise((res, rej) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          rej(new Error(`${method}: no response within ${CALL_TIMEOUT_MS} ms`));
        }, CALL_TIMEOUT_MS);
        pending.set(id, { resolve: res, reject: rej, timer });
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      });
    },
    notify(method, params) {
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`);
    },
    /** Closes stdin (the server flushes its ledger and exits) and waits for the exit. */
    async close() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const status = await exited;
      clearTimeout(timer);
      writeFileSync(stderrFile, Buffer.concat(stderr));
      return status;
    },
  };
}

/** The structured result of a tools/call (`_meta["mcp-pruner/result"]`). */
const structured = (res) => res?.result?._meta?.['mcp-pruner/result'] ?? res?.result?.structuredContent ?? {};

// ---------------------------------------------------------------------------- the scripted session
/**
 * A session such as an agent would have: reads with and without a focus question, greps, a
 * command that succeeds, two that fail, and a recover_text of lines pruning removed. Returns the
 * number of tools/call made (each leaves one ledger row).
 */
async function scriptedSession(ledger) {
  const server = startServer(
    ['stdio', '--root', REPO, '--ledger', ledger, '--pruner', 'builtin'],
    join(RESULTS, 'server.stderr.log'),
  );
  let calls = 0;
  const call = async (name, args) => {
    calls++;
    return server.request('tools/call', { name, arguments: args });
  };

  const init = await server.request('initialize', {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'stats-page-check', version: '1.0.0' },
  });
  check('session: initialize', init.result?.serverInfo?.name === 'mcp-pruner', short(init));
  server.notify('notifications/initialized', {});

  // Reads: plain (nothing to prune without a question), then focused ones that prune.
  const plain = await call('read', { path: 'src/stats/mod.rs' });
  check('session: read without a question', plain.result && !plain.result.isError, short(plain));
  const focused = await call('read', {
    path: 'src/stats/html.rs',
    context_focus_question: 'How is the width of each bar in the SVG chart computed?',
  });
  const pruning = structured(focused).pruning ?? {};
  check(
    'session: read with context_focus_question is pruned and gives a prune_id',
    pruning.applied === true && typeof pruning.prune_id === 'string',
    short(pruning),
  );
  const readme = await call('read', {
    path: 'README.md',
    context_focus_question: 'What does the savings ledger record, and what is the recovery rate?',
  });
  check('session: second focused read', readme.result && !readme.result.isError, short(readme));

  // Greps: a plain one and a focused one.
  const g1 = await call('grep', { pattern: 'fn ', paths: ['src/stats'] });
  check('session: grep', g1.result && !g1.result.isError, short(g1));
  const g2 = await call('grep', {
    pattern: 'ledger',
    paths: ['src'],
    context_focus_question: 'Where are ledger rows written to SQLite?',
  });
  check('session: grep with context_focus_question', g2.result && !g2.result.isError, short(g2));

  // Commands: one that works, and two failures (a build with no Cargo.toml, and `false`).
  const ok = await call('bash', { cmd: 'ls -la src' });
  check('session: bash ls succeeds', ok.result && !ok.result.isError, short(ok));
  const build = await call('bash', {
    cmd: 'd="$(mktemp -d)"; cd "$d" && cargo build; rc=$?; cd / && rmdir "$d"; exit "$rc"',
    context_focus_question: 'Why did the build fail?',
  });
  check('session: bash `cargo build` in an empty directory fails', build.result?.isError === true, short(build));
  const no = await call('bash', { cmd: 'false' });
  check('session: bash `false` fails', no.result?.isError === true, short(no));

  // Take back what the focused read removed: marks that read "recovered" in the ledger.
  if (pruning.prune_id) {
    const rec = await call('recover_text', { prune_id: pruning.prune_id });
    check('session: recover_text of the pruned read', rec.result && !rec.result.isError, short(rec));
  }

  const status = await server.close();
  check('session: server exits cleanly when stdin closes', status.code === 0, JSON.stringify(status));
  return calls;
}

// ---------------------------------------------------------------------------- `mcp-pruner stats`
function stats(...args) {
  const env = { ...process.env };
  delete env.MCP_PRUNER_LEDGER;
  return execFileSync(BIN, ['stats', ...args], { env, encoding: 'utf8' });
}

// ---------------------------------------------------------------------------- PNG pixels
/**
 * Decodes an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium's screenshots are) into
 * { width, height, channels, data }. Enough of the format to count pixels; nothing more.
 */
function decodePng(buf) {
  let pos = 8; // signature
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.toString('ascii', pos + 4, pos + 8);
    const body = buf.subarray(pos + 8, pos + 8 + len);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const [depth, colour, , , interlace] = body.subarray(8, 13);
      if (depth !== 8 || interlace !== 0 || (colour !== 2 && colour !== 6)) {
        throw new Error(`unsupported PNG (depth ${depth}, colour type ${colour}, interlace ${interlace})`);
      }
      channels = colour === 6 ? 4 : 3;
    } else if (type === 'IDAT') {
      idat.push(body);
    } else if (type === 'IEND') {
      break;
    }
    pos += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const data = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? data[y * stride + x - channels] : 0; // left
      const b = y > 0 ? data[(y - 1) * stride + x] : 0; // up
      const c = x >= channels && y > 0 ? data[(y - 1) * stride + x - channels] : 0; // up-left
      let v = line[x];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      data[y * stride + x] = v & 0xff;
    }
  }
  return { width, height, channels, data };
}

/**
 * How many pixels lie inside an area of the colour [r, g, b] (each channel within `tol`): the
 * pixel and its neighbours 1 to the left and right and 2 above and below all match. Bars are
 * solid rectangles 22 px high, so this counts their inside (about (w - 2) x (h - 4) pixels each);
 * the anti-aliased strokes of the labels, 1 or 2 px thin, never form such a block.
 */
function countSolid(png, [r, g, b], tol = 10) {
  const { width, height, channels, data } = png;
  const match = (x, y) => {
    const i = (y * width + x) * channels;
    return Math.abs(data[i] - r) <= tol && Math.abs(data[i + 1] - g) <= tol && Math.abs(data[i + 2] - b) <= tol;
  };
  let n = 0;
  for (let y = 2; y < height - 2; y++) {
    for (let x = 1; x < width - 1; x++) {
      let solid = true;
      for (let dy = -2; dy <= 2 && solid; dy++) {
        for (let dx = -1; dx <= 1 && solid; dx++) solid = match(x + dx, y + dy);
      }
      if (solid) n++;
    }
  }
  return n;
}

// ---------------------------------------------------------------------------- the page in Chromium
const SAVED_RGB = [0x2e, 0x7d, 0x32]; // .bar.saved { fill: #2e7d32 }
const READ_RGB = [0xbb, 0xbb, 0xbb]; // .bar.read { fill: #bbb }
// The geometry src/stats/html.rs draws with: 720 user units wide, bars start at x = 150 and a
// bar of the row with the most raw tokens spans 720 - 150 - 170 = 400 units; each bar is 22 high.
const SVG_W = 720;
const BAR_SPAN = 400;
const BAR_H = 22;

async function checkPage(pageFile, report) {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--disable-dev-shm-usage'],
    timeout: 60_000,
  });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
    // Nothing may leave the page: every request that is not the file itself (or inline data) is
    // aborted and counted. `request` events are counted too, in case routing misses a kind.
    const blocked = [];
    const requests = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file:') || url.startsWith('data:')) return route.continue();
      blocked.push(url);
      return route.abort('blockedbyclient');
    });
    const page = await context.newPage();
    const consoleErrors = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
    page.on('request', (r) => requests.push(r.url()));
    page.on('requestfailed', (r) => {
      if (!blocked.includes(r.url())) consoleErrors.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
    });

    const resp = await page.goto(pathToFileURL(pageFile).href, { waitUntil: 'load' });
    check('page: loads from file://', resp === null || resp.ok(), resp && `status ${resp.status()}`);
    check('page: title', (await page.title()) === 'mcp-pruner savings', await page.title());
    check('page: heading visible', await page.locator('h1').isVisible());
    const facts = await page.evaluate(() => ({
      scripts: document.scripts.length,
      external: [...document.querySelectorAll('[src], [href], link, iframe, object, embed, img')]
        .map((e) => e.getAttribute('src') ?? e.getAttribute('href') ?? e.tagName)
        .filter((u) => !u.startsWith('#') && !u.startsWith('data:')),
      totals: [...document.querySelectorAll('.totals b')].map((b) => b.textContent),
    }));
    check('page: no <script>', facts.scripts === 0, `${facts.scripts} scripts`);
    check('page: no external resource referenced', facts.external.length === 0, short(facts.external));
    const thousands = (n) => n.toLocaleString('en-US');
    check(
      'page: totals show the report (tokens saved, calls)',
      facts.totals[0] === thousands(report.total.tokens_saved) && facts.totals[1] === thousands(report.total.calls),
      short(facts.totals),
    );

    // Both charts, in page order: per day, then per tool.
    const charts = page.locator('svg.chart');
    check('charts: two <svg class="chart">', (await charts.count()) === 2, `${await charts.count()} found`);
    const expected = [
      { name: 'per-day chart', label: /per day/, rows: report.by_day },
      { name: 'per-tool chart', label: /by tool/, rows: report.by_tool },
    ];
    for (const [i, want] of expected.entries()) {
      const svg = charts.nth(i);
      const box = await svg.boundingBox();
      check(`${want.name}: visible`, await svg.isVisible());
      check(`${want.name}: non-zero size`, box && box.width > 0 && box.height > 0, short(box));
      check(`${want.name}: titled`, want.label.test((await svg.getAttribute('aria-label')) ?? ''));
      if (!box) continue;
      const scale = box.width / SVG_W; // CSS px per SVG user unit
      check(`${want.name}: drawn at its natural size`, Math.abs(scale - 1) < 0.01, `${box.width} px wide, want ${SVG_W}`);
      check(`${want.name}: the report has rows to draw`, want.rows.length > 0, 'no rows');

      // Every bar as Chromium laid it out, with its computed fill.
      const bars = await svg.evaluate((el) =>
        [...el.querySelectorAll('rect.bar')].map((r) => {
          const b = r.getBoundingClientRect();
          return { cls: r.getAttribute('class'), w: b.width, h: b.height, fill: getComputedStyle(r).fill };
        }),
      );
      const labels = await svg.evaluate((el) => [...el.querySelectorAll('text.label')].map((t) => t.textContent));
      check(
        `${want.name}: a label per row`,
        JSON.stringify(labels) === JSON.stringify(want.rows.map((r) => r.key)),
        `${short(labels)} vs ${short(want.rows.map((r) => r.key))}`,
      );
      const saved = bars.filter((b) => b.cls === 'bar saved');
      const read = bars.filter((b) => b.cls === 'bar read');
      check(
        `${want.name}: a saved and a read bar per row`,
        saved.length === want.rows.length && read.length === want.rows.length,
        `${saved.length} saved, ${read.length} read, ${want.rows.length} rows`,
      );
      check(
        `${want.name}: bars filled green (saved) and grey (read)`,
        saved.every((b) => b.fill === 'rgb(46, 125, 50)') && read.every((b) => b.fill === 'rgb(187, 187, 187)'),
        short(bars.map((b) => b.fill)),
      );
      // Each bar's rendered width is its share of the row with the most raw tokens.
      const max = Math.max(1, ...want.rows.map((r) => r.tokens_raw));
      const widthOf = (tokens) => (tokens / max) * BAR_SPAN * scale;
      const off = [];
      want.rows.forEach((r, k) => {
        for (const [bar, tokens] of [
          [saved[k], r.tokens_saved],
          [read[k], r.tokens_read],
        ]) {
          if (!bar) continue;
          const w = widthOf(tokens);
          if (Math.abs(bar.w - w) > 1 || (w > 0 && Math.abs(bar.h - BAR_H * scale) > 1)) {
            off.push(`${r.key} ${bar.cls}: ${bar.w.toFixed(1)}x${bar.h.toFixed(1)} px, want ${w.toFixed(1)} wide`);
          }
        }
      });
      check(`${want.name}: bar widths match the report`, off.length === 0, off.join('; '));
      const drawn = bars.filter((b) => b.w > 0 && b.h > 0);
      check(`${want.name}: bars with non-zero rendered size`, drawn.length > 0, short(bars));

      // And the pixels: the screenshot of the chart holds about as many solid green and grey
      // pixels as the insides of the bars the report calls for (the bars are drawn at their
      // natural size, checked above, so the insides are (w - 2) x (22 - 4) pixels each; rounding
      // of fractional widths is the tolerance).
      if (!(await svg.isVisible())) continue;
      const png = decodePng(await svg.screenshot({ timeout: 10_000 }));
      for (const [what, rgb, field] of [
        ['green (saved)', SAVED_RGB, 'tokens_saved'],
        ['grey (read)', READ_RGB, 'tokens_read'],
      ]) {
        const inside = want.rows.reduce((s, r) => s + Math.max(0, widthOf(r[field]) - 2) * Math.max(0, BAR_H * scale - 4), 0);
        const seen = countSolid(png, rgb);
        const slack = 0.1 * inside + 2 * BAR_H * want.rows.length;
        check(
          `${want.name}: ${what} bars drawn in the screenshot (${seen} solid px; the bars' insides: ${inside.toFixed(0)})`,
          Math.abs(seen - inside) <= slack && (inside === 0 || seen > 0),
        );
      }
    }
    check(
      'tables: one "By tool" row per tool',
      (await page.locator('h2:has-text("By tool") + table tr').count()) === report.by_tool.length + 1,
    );

    const shot = join(RESULTS, 'stats_page.png');
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`screenshot: ${shot}`);

    const left = [...blocked, ...requests.filter((u) => !u.startsWith('file:') && !u.startsWith('data:'))];
    check('network: no request leaves the page', left.length === 0, short([...new Set(left)]));
    check('console: no errors', consoleErrors.length === 0, short(consoleErrors));
    await context.close();
  } finally {
    await browser.close();
  }
}

// ---------------------------------------------------------------------------- main
async function main() {
  mkdirSync(RESULTS, { recursive: true });
  if (!check('binary exists', existsSync(BIN), BIN)) return;
  if (!check('chromium exists', existsSync(CHROMIUM), CHROMIUM)) return;
  const tmp = mkdtempSync(join(tmpdir(), 'mcp-pruner-stats-page-'));
  try {
    const ledger = join(tmp, 'ledger.sqlite3');
    const calls = await scriptedSession(ledger);

    // What a user would run: the table, the JSON report, and the page.
    const text = stats('--ledger', ledger);
    const json = stats('--ledger', ledger, '--json');
    writeFileSync(join(RESULTS, 'stats.txt'), text);
    writeFileSync(join(RESULTS, 'stats.json'), json);
    const report = JSON.parse(json);
    check('stats: one ledger row per tools/call', report.total.calls === calls, `${report.total.calls} rows, ${calls} calls`);
    check('stats: some tokens saved', report.total.tokens_saved > 0, short(report.total));
    check('stats: the recovered read is counted', report.total.recovered_calls >= 1, short(report.total));
    check('stats: the table names every tool called', ['read', 'grep', 'bash', 'recover_text'].every((t) => text.includes(t)));
    const pageFile = join(RESULTS, 'page.html');
    const wrote = stats('--ledger', ledger, '--html', pageFile);
    check('stats --html: writes the page', existsSync(pageFile) && wrote.startsWith('wrote '), wrote.trim());

    await checkPage(pageFile, report);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (e) {
  check('no unexpected error', false, e?.stack ?? String(e));
}
console.log(`stats page: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
