// Runs the console's event stream reader (ui/js/sse.js) under Node against the scenarios of
// internal/console's TestEventStreamReader (a real HTTP server on loopback) and prints one JSON
// line: for each scenario, the events received, the status changes and whether the stream was
// refused.
//
//   node sse_check.mjs --base http://127.0.0.1:PORT --module ../ui/js/sse.js
import fs from 'node:fs';
import { parseArgs } from 'node:util';

const { values: opts } = parseArgs({ options: { base: { type: 'string' }, module: { type: 'string' } } });
// sse.js is an ES module in a folder without a package.json: import its text as one.
const src = fs.readFileSync(opts.module, 'utf8');
const { EventStream, SSEParser, SSEError } = await import('data:text/javascript;base64,' + Buffer.from(src).toString('base64'));

const TIMEOUT_MS = 10000;

// follow runs one EventStream until it has `want` events or is closed, or TIMEOUT_MS passes.
function follow(name, want, extra) {
  return new Promise((resolve) => {
    const out = { events: [], statuses: [], refused: 0, timedOut: false };
    const t0 = Date.now();
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.stop();
      out.ms = Date.now() - t0;
      resolve([name, out]);
    };
    const s = new EventStream({
      url: opts.base + '/s/' + name,
      headers: () => ({ 'x-access-token': 'tok' }),
      minDelay: 100, maxDelay: 2000, stall: 60000, steady: 60000,
      ...extra,
      onEvent: (ev) => {
        out.events.push(ev);
        if (out.events.length >= want) finish();
      },
      onStatus: (st, detail) => out.statuses.push(detail ? st + ': ' + detail : st),
      onRefused: (code) => {
        out.refused = code;
        // Wait a while to see that it does not try again.
        setTimeout(finish, 1000);
      },
    });
    const timer = setTimeout(() => { out.timedOut = true; finish(); }, TIMEOUT_MS);
    s.start();
  });
}

// parserCaps checks the caps without a server: a long line in one piece, and in many.
function parserCaps() {
  const res = {};
  for (const [name, feed] of [
    ['oneLine', (p) => p.push('data: ' + 'x'.repeat(200) + '\n')],
    ['pieces', (p) => { for (let i = 0; i < 50; i++) p.push('xxxxxxxxxx'); }],
    ['event', (p) => { for (let i = 0; i < 50; i++) p.push('data: ' + 'y'.repeat(50) + '\n'); }],
  ]) {
    const p = new SSEParser({}, { maxLine: 100, maxEvent: 1000 });
    try {
      feed(p);
      res[name] = 'no error';
    } catch (e) {
      res[name] = (e instanceof SSEError ? 'SSEError: ' : 'other: ') + e.message;
    }
  }
  return res;
}

const runs = await Promise.all([
  follow('split', 6),
  follow('big', 2),
  follow('busy', 1),
  follow('auth', 1),
  follow('stall', 2, { stall: 600 }),
]);
process.stdout.write(JSON.stringify({ scenarios: Object.fromEntries(runs), parser: parserCaps() }) + '\n');
