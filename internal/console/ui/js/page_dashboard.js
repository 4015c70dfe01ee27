// The dashboard: CPU, memory and disk with a chart of the last five minutes, the processes by
// state, and the ports the service holds.
import { h, fill, sparkline, fmtTime } from './dom.js';
import { call } from './api.js';
import { modules } from './modules.js';

// Samples every 2 s while the dashboard is shown (getStat: the server_stats event comes only
// every 10 s): 150 are five minutes.
const KEEP = 150;
const history = { cpu: [], ram: [], disk: [] };
const STATES = ['running', 'waiting', 'starting', 'reconnecting', 'failed', 'stopped'];

function push(a, v) { a.push(Number(v) || 0); if (a.length > KEEP) a.shift(); }

function gauge(title, value, detail, hist) {
  return h('div', { class: 'card', dataset: { gauge: title.toLowerCase() } },
    h('h2', {}, title),
    h('p', { class: 'big num' }, value),
    h('p', { class: 'muted' }, detail),
    sparkline(hist, { width: 260, height: 48, max: 100, stretch: true, label: title + ' over the last minutes, percent' }));
}

export function dashboard() {
  const gauges = h('div', { class: 'cards' });
  const counts = h('tbody');
  const ports = h('tbody');
  const el = h('section', { class: 'page', dataset: { page: 'dashboard' } },
    h('div', { class: 'page-head' }, h('h1', {}, 'Dashboard')),
    gauges,
    h('div', { class: 'two' },
      h('div', {}, h('h2', {}, 'Processes by state'),
        h('div', { class: 'table-wrap' }, h('table', { class: 'records counts' },
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Module'), STATES.map((s) => h('th', { scope: 'col' }, s)))),
          counts))),
      h('div', {}, h('h2', {}, 'Ports in use'),
        h('div', { class: 'table-wrap' }, h('table', { class: 'records' },
          h('thead', {}, h('tr', {}, ['Port', 'Module', 'Entity', 'Since'].map((c) => h('th', { scope: 'col' }, c)))),
          ports)))));
  const view = { el, title: 'Dashboard' };
  const keys = ['players', 'restreams', 'recordings', 'srt-servers', 'rtmp-servers'];
  let lists = keys.map(() => []);
  // The newest state event of each record, numbered, so that lists read before it arrived
  // do not put an older state back.
  const latest = new Map();
  let seq = 0;

  function renderCounts() {
    fill(counts, keys.map((k, i) => {
      const by = {};
      for (const r of lists[i]) by[r.state] = (by[r.state] || 0) + 1;
      return h('tr', { dataset: { module: k } }, h('th', { scope: 'row' }, h('a', { href: '#/' + k }, modules[k].title)),
        STATES.map((s) => h('td', { class: 'num' + (by[s] ? ' state-' + s : '') }, String(by[s] || 0))));
    }));
  }

  // The records and ports: at first, on created, updated and removed events, and every 30 s
  // (every 2 s while the event stream is down). State events move the counts.
  view.refresh = async () => {
    const mark = seq;
    const [claims, ...got] = await Promise.all([
      call('/api/ports/getAll'), ...keys.map((k) => call('/api/' + modules[k].api + '/getAll')),
    ]);
    for (const list of got) {
      for (const r of list) {
        const l = latest.get(r.id);
        if (l && l.n > mark) r.state = l.state;
      }
    }
    lists = got;
    renderCounts();
    fill(ports, claims.length ? claims.map((c) => h('tr', {},
      h('td', { class: 'num' }, c.port + '/' + c.transport),
      h('td', {}, (c.module_name || '').replace('MODULE_', '').toLowerCase()),
      h('td', {}, c.entity_name || ''), h('td', {}, fmtTime(c.created))))
      : h('tr', {}, h('td', { colspan: 4, class: 'muted' }, 'none')));
  };
  view.onEvent = (ev) => {
    const i = keys.findIndex((k) => modules[k].event === ev.module);
    if (i < 0 || !ev.id) return null;
    if (ev.type === 'state') {
      latest.set(ev.id, { n: ++seq, state: ev.state });
      const r = lists[i].find((x) => x.id === ev.id);
      if (!r) return view.reload();
      r.state = ev.state;
      renderCounts();
      return null;
    }
    if (ev.type === 'removed') latest.delete(ev.id);
    return ['created', 'updated', 'removed'].includes(ev.type) ? view.reload() : null;
  };
  // CPU, memory and disk, every 2 s, for the charts.
  view.sample = async () => {
    const stat = await call('/api/utils/getStat');
    push(history.cpu, stat.cpuUsage);
    push(history.ram, stat.RAM && stat.RAM.usedMemPercentage);
    push(history.disk, stat.drive && stat.drive.usedPercentage);
    fill(gauges,
      gauge('CPU', Number(stat.cpuUsage).toFixed(1) + ' %', 'all cores', history.cpu),
      gauge('Memory', Number(stat.RAM.usedMemPercentage).toFixed(1) + ' %',
        Math.round(stat.RAM.usedMemMb) + ' of ' + Math.round(stat.RAM.totalMemMb) + ' MB used', history.ram),
      gauge('Disk', stat.drive.usedPercentage + ' %', stat.drive.freeGb + ' GB free of ' + stat.drive.totalGb + ' GB (data folder)', history.disk));
  };
  return view;
}
