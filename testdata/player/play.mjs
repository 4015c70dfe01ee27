// Plays one HLS or DASH URL in headless Chromium with hls.js or dash.js and prints one JSON line.
//
//   node play.mjs --kind hls|dash --src URL [--duration 12] [--start-timeout 20]
//                 [--live-delay SECONDS] [--low-latency] [--stamp] [--chromium /usr/bin/chromium]
//                 [--screenshot out.png] [--insecure] [--protocols] [--check-page URL]
//
// It serves this folder (player.html and the players under node_modules) on 127.0.0.1:0, opens
// player.html?kind=..&src=.., waits until the video plays, then samples window.__state() every
// 500 ms for --duration seconds. The media server must send Access-Control-Allow-Origin.
// --live-delay sets how far behind a live edge the player stays (hls.js liveSyncDuration, dash.js
// liveDelay); without it hls.js keeps 3 target durations and dash.js @suggestedPresentationDelay.
// --low-latency plays with hls.js lowLatencyMode (LL-HLS) and dash.js live catch-up; without it
// lowLatencyMode is off (dash.js turns its own low-latency mode on when the MPD asks for it).
// --stamp reads the bench's glass-to-glass stamp off the displayed frames (stamp.js) and adds
// stamp: {samples: [[atMs, latencyMs]...], undecoded, stalls: [atMs...], reads, rvfc} over the
// window to the result.
// --insecure accepts any server certificate (--ignore-certificate-errors), for HTTPS servers
// with a self-signed one.
// --check-page opens URL (a page of the media server, e.g. its watch page) after the playback
// window, waits until its first <video> plays, and adds checkPage: {url, navigation, protocols,
// playing, currentTime}: the page's own nextHopProtocol and its same-origin resource timing
// entries counted by nextHopProtocol (same-origin, so the browser exposes them).
//
// Result: {ok, kind, src, playedSeconds, advance, startupSeconds, seeks, stalls, latency,
// readTimeouts, samples, decoded, errors, warnings, console, support, player, browser, reason,
// elapsedSeconds, protocols}. With --protocols, protocols counts the responses from the --src
// origin by the protocol Chromium's network stack reports ('h2', 'http/1.1'; DevTools' Network
// domain, which sees cross-origin requests whose resource timing the page may not read); it is
// off by default so that measurements run without DevTools' network events. stalls counts the video element's 'waiting' events during the window;
// latency sums up hls.js's hls.latency over the window's samples ({last, mean, max}, seconds,
// null for dash.js).
// playedSeconds sums the currentTime steps between samples that look like playback (at most twice
// the wall-clock step); larger jumps are counted in seeks. Exit status: 0 played, 1 the player
// failed or did not advance, 2 the harness itself failed (arguments, browser launch, watchdog).
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  // Without these Chromium dials Google services, which a closed network refuses.
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
const SAMPLE_MS = 500;
const READ_TIMEOUT_MS = 5000;
const MAX_MISSED = 3;
const LAUNCH_TIMEOUT_MS = 30000;
const NAV_TIMEOUT_MS = 15000;
const CLOSE_TIMEOUT_MS = 10000;

const root = path.dirname(fileURLToPath(import.meta.url));
const started = Date.now();
const result = {
  ok: false, kind: '', src: '', playedSeconds: 0, advance: 0, startupSeconds: -1, seeks: 0,
  stalls: 0, latency: null, readTimeouts: 0, samples: [], errors: [], warnings: [], console: [], support: {}, player: '',
  browser: '', reason: '', protocols: {},
};

let printed = false;
function finish(code, reason) {
  if (printed) return;
  printed = true;
  if (reason && !result.reason) result.reason = reason;
  result.elapsedSeconds = round((Date.now() - started) / 1000);
  process.stdout.write(JSON.stringify(result) + '\n', () => process.exit(code));
}

function round(x) { return Math.round(x * 1000) / 1000; }
function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }
function bounded(p, ms, what) {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(what + ': timed out after ' + ms + ' ms')), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

let opts;
try {
  opts = parseArgs({
    options: {
      kind: { type: 'string' },
      src: { type: 'string' },
      duration: { type: 'string', default: '12' },
      'start-timeout': { type: 'string', default: '20' },
      'live-delay': { type: 'string' },
      'low-latency': { type: 'boolean', default: false },
      stamp: { type: 'boolean', default: false },
      chromium: { type: 'string', default: '/usr/bin/chromium' },
      screenshot: { type: 'string' },
      insecure: { type: 'boolean', default: false },
      'check-page': { type: 'string' },
      protocols: { type: 'boolean', default: false },
    },
  }).values;
} catch (e) {
  finish(2, 'arguments: ' + e.message);
}
if (opts) main().catch((e) => finish(2, 'harness: ' + (e && e.stack || e)));

async function main() {
  result.kind = opts.kind || '';
  result.src = opts.src || '';
  const duration = Number(opts.duration);
  const startTimeout = Number(opts['start-timeout']);
  const bad = (flag, want) => finish(2, 'arguments: --' + flag + ' ' + opts[flag] + ': want ' + want);
  if (!['hls', 'dash'].includes(opts.kind)) return bad('kind', 'hls or dash');
  if (!opts.src) return bad('src', 'a URL');
  if (!(duration > 0 && duration <= 600)) return bad('duration', '0 < seconds <= 600');
  if (!(startTimeout > 0 && startTimeout <= 300)) return bad('start-timeout', '0 < seconds <= 300');
  if (opts['live-delay'] !== undefined && !(Number(opts['live-delay']) > 0)) {
    return bad('live-delay', 'seconds > 0');
  }

  // Whatever happens below, the process ends in bounded time.
  let budget = LAUNCH_TIMEOUT_MS + NAV_TIMEOUT_MS + CLOSE_TIMEOUT_MS +
    (startTimeout + duration) * 1000 + 4 * READ_TIMEOUT_MS;
  // --check-page: its navigation, start, 2 s of play, reads and close.
  if (opts['check-page']) budget += NAV_TIMEOUT_MS + startTimeout * 1000 + 2000 + 3 * READ_TIMEOUT_MS + CLOSE_TIMEOUT_MS;
  setTimeout(() => finish(2, 'watchdog: still running after ' + budget + ' ms'), budget).unref();

  const server = await serve();
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-chromium-'));
  let ctx;
  const cleanup = async () => {
    if (ctx) await bounded(ctx.close(), CLOSE_TIMEOUT_MS, 'close chromium').catch(() => {});
    server.close();
    fs.rmSync(profile, { recursive: true, force: true });
  };
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => { cleanup().finally(() => finish(2, 'interrupted by ' + sig)); });
  }

  let code;
  try {
    code = await run(server, profile, duration, startTimeout, (c) => { ctx = c; });
  } catch (e) {
    result.reason = result.reason || 'harness: ' + (e && e.message || e);
    code = 2;
  }
  await cleanup();
  finish(code);
}

async function run(server, profile, duration, startTimeout, setCtx) {
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: opts.chromium,
    headless: true,
    args: opts.insecure ? [...FLAGS, '--ignore-certificate-errors'] : FLAGS,
    timeout: LAUNCH_TIMEOUT_MS,
    viewport: { width: 640, height: 360 },
  });
  setCtx(ctx);
  result.browser = ctx.browser() ? ctx.browser().version() : '';
  const page = ctx.pages()[0] || await ctx.newPage();
  page.on('pageerror', (e) => result.errors.push('page: ' + e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') {
      result.console.push(m.type() + ': ' + m.text());
      if (result.console.length > 50) result.console.shift();
    }
  });

  if (opts.protocols) {
    const srcOrigin = new URL(opts.src).origin;
    const cdp = await ctx.newCDPSession(page);
    cdp.on('Network.responseReceived', (e) => {
      if (new URL(e.response.url).origin !== srcOrigin) return;
      const p = e.response.protocol || '';
      result.protocols[p] = (result.protocols[p] || 0) + 1;
    });
    await cdp.send('Network.enable');
  }

  const { port } = server.address();
  let url = 'http://127.0.0.1:' + port + '/player.html?kind=' + encodeURIComponent(opts.kind) +
    '&src=' + encodeURIComponent(opts.src);
  if (opts['live-delay'] !== undefined) url += '&liveDelay=' + encodeURIComponent(opts['live-delay']);
  if (opts['low-latency']) url += '&lowLatency=1';
  if (opts.stamp) url += '&stamp=1';
  await page.goto(url, { timeout: NAV_TIMEOUT_MS, waitUntil: 'load' });

  // state reads __state(). A read can wait behind a busy renderer; one that takes over
  // READ_TIMEOUT_MS is counted and skipped (the next read spans the gap), MAX_MISSED in a row end
  // the run.
  let missed = 0;
  const state = async (prev) => {
    const t = Date.now();
    try {
      const read = page.evaluate(() => window.__state());
      const st = await bounded(read, READ_TIMEOUT_MS, 'read __state()');
      st.readMs = Date.now() - t;
      missed = 0;
      absorb(st);
      return st;
    } catch (e) {
      result.readTimeouts++;
      if (!prev || ++missed >= MAX_MISSED) throw e;
      return null;
    }
  };
  const absorb = (s) => {
    for (const e of s.errors) if (!result.errors.includes(e)) result.errors.push(e);
    result.warnings = s.warnings;
    result.support = s.support;
    result.player = s.player;
  };

  // Startup: until the element plays from some position (live players seek first, then play).
  const t0 = Date.now();
  let s = await state(null);
  while (!(s.currentTime > 0 && !s.paused && s.readyState >= 2) && result.errors.length === 0) {
    if (Date.now() - t0 > startTimeout * 1000) {
      result.samples.push(sample(s, t0));
      result.reason = 'did not start playing within ' + startTimeout + ' s';
      return 1;
    }
    await sleep(SAMPLE_MS);
    s = (await state(s)) || s;
  }
  if (result.errors.length > 0) {
    result.samples.push(sample(s, t0));
    result.reason = 'fatal player error before playback started';
    return 1;
  }
  result.startupSeconds = round((Date.now() - t0) / 1000);

  // Playback window.
  const w0 = Date.now();
  let prev = { s, at: w0 };
  const first = s;
  result.samples.push(sample(s, w0));
  let played = 0;
  while (Date.now() - w0 < duration * 1000 && result.errors.length === 0) {
    await sleep(SAMPLE_MS);
    const next = await state(s);
    if (!next) continue;
    s = next;
    const at = Date.now();
    const step = s.currentTime - prev.s.currentTime;
    const wall = (at - prev.at) / 1000;
    if (step > 0 && step <= 2 * wall) played += step;
    else if (Math.abs(step) > 0.001) result.seeks++;
    prev = { s, at };
    result.samples.push(sample(s, w0));
  }
  result.playedSeconds = round(played);
  if (opts.stamp) {
    result.stamp = await bounded(page.evaluate((since) => window.__latency(since), w0),
      READ_TIMEOUT_MS, 'read __latency()');
  }
  result.advance = round(s.currentTime - first.currentTime);
  result.stalls = s.waiting - first.waiting;
  const lat = result.samples.map((x) => x.latency).filter((x) => typeof x === 'number');
  if (lat.length > 0) {
    result.latency = {
      last: round(lat[lat.length - 1]),
      mean: round(lat.reduce((a, b) => a + b, 0) / lat.length),
      max: round(Math.max(...lat)),
      target: s.targetLatency === null ? null : round(s.targetLatency),
      lowLatencyMode: s.lowLatencyMode,
    };
  }
  result.decoded = {
    videoFrames: s.videoFrames, droppedFrames: s.droppedFrames,
    audioBytes: s.audioDecodedBytes, videoBytes: s.videoDecodedBytes,
    width: s.videoWidth, height: s.videoHeight,
  };
  if (opts.screenshot) {
    await bounded(page.screenshot({ path: opts.screenshot }), 10000, 'screenshot')
      .catch((e) => result.warnings.push(String(e)));
  }
  if (opts['check-page']) result.checkPage = await checkPage(ctx, opts['check-page'], startTimeout);
  if (result.errors.length > 0) {
    result.reason = 'fatal player error during playback';
    return 1;
  }
  if (!(played > 0)) {
    result.reason = 'currentTime did not advance in ' + duration + ' s';
    return 1;
  }
  result.ok = true;
  return 0;
}

// checkPage opens url in a new page, waits up to startTimeout s for its first video to play and
// 2 s more, and reads the protocols of the page and of its same-origin resources.
async function checkPage(ctx, url, startTimeout) {
  const out = { url, navigation: '', protocols: {}, playing: false, currentTime: 0, error: '' };
  const page = await ctx.newPage();
  try {
    await page.goto(url, { timeout: NAV_TIMEOUT_MS, waitUntil: 'load' });
    const t0 = Date.now();
    const playing = () => bounded(page.evaluate(() => {
      const v = document.querySelector('video');
      return v ? { p: v.currentTime > 0 && !v.paused && v.readyState >= 2, t: v.currentTime } : { p: false, t: 0 };
    }), READ_TIMEOUT_MS, 'read the video');
    let v = await playing();
    while (!v.p && Date.now() - t0 < startTimeout * 1000) {
      await sleep(SAMPLE_MS);
      v = await playing();
    }
    if (v.p) {
      await sleep(2000);
      v = await playing();
    }
    out.playing = v.p;
    out.currentTime = round(v.t);
    Object.assign(out, await bounded(page.evaluate(() => {
      const n = {};
      for (const e of performance.getEntriesByType('resource')) {
        if (new URL(e.name).origin === location.origin) n[e.nextHopProtocol] = (n[e.nextHopProtocol] || 0) + 1;
      }
      const nav = performance.getEntriesByType('navigation')[0];
      return { navigation: nav ? nav.nextHopProtocol : '', protocols: n };
    }), READ_TIMEOUT_MS, 'read resource timing'));
  } catch (e) {
    out.error = String(e && e.message || e);
  }
  await bounded(page.close(), CLOSE_TIMEOUT_MS, 'close the checked page').catch(() => {});
  return out;
}

function sample(s, since) {
  return {
    t: round((Date.now() - since) / 1000),
    currentTime: round(s.currentTime), paused: s.paused, readyState: s.readyState,
    rate: s.playbackRate, buffered: s.buffered.map((r) => r.map(round)),
    videoFrames: s.videoFrames, audioDecodedBytes: s.audioDecodedBytes, readMs: s.readMs,
    latency: s.latency === null ? null : round(s.latency), waiting: s.waiting,
  };
}

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.map': 'application/json',
};

// serve answers GET for files under this folder, and /time with the local clock for dash.js.
function serve() {
  const server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://127.0.0.1');
    if (req.method !== 'GET' && req.method !== 'HEAD') { res.writeHead(405).end(); return; }
    if (u.pathname === '/time') {
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-store' })
        .end(new Date().toISOString());
      return;
    }
    let file;
    try {
      file = path.join(root, path.normalize(decodeURIComponent(u.pathname)));
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (!file.startsWith(root + path.sep)) { res.writeHead(403).end(); return; }
    fs.readFile(file, (err, data) => {
      if (err) { res.writeHead(404).end(); return; }
      const type = TYPES[path.extname(file)] || 'application/octet-stream';
      res.writeHead(200, { 'Content-Type': type }).end(data);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}
