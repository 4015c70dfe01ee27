// The speed test: one POST that runs for several seconds; the page shows the time running and
// an indeterminate progress bar until the result arrives.
import { h, fill, fmtTime } from './dom.js';
import { call } from './api.js';

function mbps(bytesPerSec) { return ((Number(bytesPerSec) || 0) * 8 / 1e6).toFixed(2) + ' Mbit/s'; }

export function speedtest() {
  const btn = h('button', { type: 'button', class: 'primary', id: 'run-speedtest' }, 'Run the speed test');
  const out = h('div', { class: 'speed-result', 'aria-live': 'polite' });
  const el = h('section', { class: 'page', dataset: { page: 'speedtest' } },
    h('div', { class: 'page-head' }, h('h1', {}, 'Speed test'), btn),
    h('p', { class: 'muted' }, 'Measures latency, download and upload against the configured target (--speedtest-url, another sluice).'),
    out);
  let ticker = null;
  btn.addEventListener('click', async () => {
    btn.disabled = true;
    const started = Date.now();
    const secs = h('span', { class: 'num' }, '0 s');
    fill(out, h('progress', { 'aria-label': 'Speed test running' }), h('p', {}, 'Running… ', secs));
    ticker = setInterval(() => { secs.textContent = Math.round((Date.now() - started) / 1000) + ' s'; }, 500);
    try {
      const r = await call('/api/utils/speedtest');
      fill(out, h('dl', { class: 'kv' },
        h('dt', {}, 'When'), h('dd', {}, fmtTime(r.timestamp)),
        h('dt', {}, 'Latency'), h('dd', {}, (r.ping && r.ping.latency) + ' ms (jitter ' + (r.ping && r.ping.jitter) + ' ms)'),
        h('dt', {}, 'Download'), h('dd', {}, mbps(r.download && r.download.bandwidth)),
        h('dt', {}, 'Upload'), h('dd', {}, mbps(r.upload && r.upload.bandwidth)),
        h('dt', {}, 'Packet loss'), h('dd', {}, r.packetLoss === null || r.packetLoss === undefined ? 'not measured' : r.packetLoss + ' %'),
        h('dt', {}, 'Interface'), h('dd', {}, r.interface ? r.interface.name + ' ' + (r.interface.internalIp || '') : '—')));
    } catch (err) {
      fill(out, h('p', { class: 'error-text', role: 'alert' }, err.message));
    } finally {
      clearInterval(ticker);
      btn.disabled = false;
    }
  });
  return { el, title: 'Speed test', destroy: () => clearInterval(ticker) };
}
