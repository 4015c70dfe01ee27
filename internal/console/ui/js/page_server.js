// SRT and RTMP server modules: the list, the create form, and a server's page with the publish
// and play addresses for encoders (filled with this host, the port and a stream name) and the
// streams published now.
import { h, fill, stateBadge, fmtKbps, fmtTime, copyRow } from './dom.js';
import { call } from './api.js';
import { modules, getRecord, leaveRecord, recordHead } from './modules.js';
import { listPage } from './list.js';

export function serverList(key) {
  return listPage(key, {
    columns: ['Port'],
    cells: (r) => [h('td', { class: 'num' }, r.server_port + (key === 'srt-servers' ? '/UDP' : '/TCP'))],
  }).view;
}

function slug(name) { return name.toLowerCase().replace(/ /g, '-'); }

function srtAddresses(r, host, stream) {
  const pub = (r.publisher_prefix || 'publisher') + '/' + slug(r.server_name) + '/' + stream;
  const rec = (r.receiver_prefix || 'receiver') + '/' + slug(r.server_name) + '/' + stream;
  const base = 'srt://' + host + ':' + r.server_port;
  const pass = r.server_passphrase_set ? '&passphrase=YOUR_PASSPHRASE' : '';
  const latency = '&latency=' + ((r.server_latency || 200) * 1000);
  return [
    h('h3', {}, 'Publish (encoders)'),
    copyRow('SRT URL', base + '?streamid=' + pub + pass),
    copyRow('ffmpeg', 'ffmpeg -re -i input.mp4 -c copy -f mpegts "' + base + '?streamid=' + pub + pass + latency + '"'),
    copyRow('OBS (Settings › Stream › Custom, Server)', base + '?streamid=' + pub + pass),
    copyRow('vMix (SRT output: Caller, host, port, stream id)', host + '  ' + r.server_port + '  ' + pub),
    h('h3', {}, 'Play (receivers)'),
    copyRow('SRT URL', base + '?streamid=' + rec + pass),
    copyRow('ffplay', 'ffplay "' + base + '?streamid=' + rec + pass + '"'),
    copyRow('Input of a player or restream', 'INPUT_TYPE_SRT_SOFTWARE, server ' + r.server_name + ', stream id ' + pub),
  ];
}

function rtmpAddresses(r, host, stream) {
  const base = 'rtmp://' + host + ':' + r.server_port + '/live';
  const pub = stream + (r.server_publish_password_set ? '?password=YOUR_PUBLISH_PASSWORD' : '');
  const play = stream + (r.server_play_password_set ? '?password=YOUR_PLAY_PASSWORD' : '');
  return [
    h('h3', {}, 'Publish (encoders)'),
    copyRow('RTMP URL', base + '/' + pub),
    copyRow('ffmpeg', 'ffmpeg -re -i input.mp4 -c:v libx264 -c:a aac -f flv "' + base + '/' + pub + '"'),
    copyRow('OBS (Settings › Stream › Custom, Server)', base),
    copyRow('OBS stream key', pub),
    copyRow('vMix (Stream › Custom RTMP: URL, stream name)', base + '  ' + pub),
    h('h3', {}, 'Play (receivers)'),
    copyRow('ffplay', 'ffplay "' + base + '/' + play + '"'),
    copyRow('Input of a player or restream', 'INPUT_TYPE_RTMP_SOFTWARE, server ' + r.server_name + ', stream id ' + stream),
  ];
}

export function serverDetail(key, id) {
  const m = modules[key];
  const head = h('div', { class: 'page-head' });
  const status = h('div', { class: 'status-line' });
  const formBox = h('section', { class: 'form-box', hidden: true, 'aria-label': 'Edit' });
  const streamInput = h('input', { id: 'stream-name', type: 'text', value: 'stream1', autocomplete: 'off' });
  const addrs = h('div');
  const streams = h('tbody');
  const el = h('section', { class: 'page', dataset: { page: key + '-detail', id } }, head, status, formBox,
    h('h2', {}, 'Addresses for encoders and players'),
    h('div', { class: 'field inline' }, h('label', { for: 'stream-name' }, 'Stream name'), streamInput),
    addrs,
    h('h2', {}, 'Streams published now'),
    h('div', { class: 'table-wrap' }, h('table', { class: 'records' },
      h('caption', { class: 'sr-only' }, 'Streams published now'),
      h('thead', {}, h('tr', {}, ['Stream', 'Publisher', 'Since', 'Bitrate', 'Readers', 'RTT', 'Lost', 'Retransmitted']
        .map((c) => h('th', { scope: 'col' }, c)))),
      streams)));
  const view = { el, title: m.noun };
  let rec = null;
  let lastActive = null;
  const host = location.hostname.includes(':') ? '[' + location.hostname + ']' : location.hostname;

  function renderAddrs() {
    const stream = streamInput.value.trim() || 'stream1';
    fill(addrs, key === 'srt-servers' ? srtAddresses(rec, host, stream) : rtmpAddresses(rec, host, stream));
  }
  streamInput.addEventListener('input', () => rec && renderAddrs());

  view.refresh = async () => {
    const got = await getRecord(key, id);
    if (!got) return;
    rec = got;
    if (lastActive !== rec.active) {
      lastActive = rec.active;
      recordHead(head, formBox, key, rec, () => { lastActive = null; view.reload(); });
      renderAddrs();
    }
    el.dataset.state = rec.state;
    fill(status, stateBadge(rec.state), ' since ', fmtTime(rec.state_since), ' · port ', String(rec.server_port),
      rec.last_error ? h('p', { class: 'error-text' }, 'Last error: ' + rec.last_error) : null);
  };
  view.onEvent = (ev) => {
    if (ev.module !== m.event || ev.id !== id) return null;
    if (ev.type === 'removed') {
      leaveRecord(key, id);
      return null;
    }
    // A publisher came or went: the streams table; anything else: the record (and, after an
    // edit, the addresses).
    if (ev.type === 'updated') lastActive = null;
    return ev.type.startsWith('publisher_') ? view.sample() : view.reload();
  };
  // The streams published now, with their figures, every 2 s.
  view.sample = async () => {
    if (!rec) return;
    const list = rec.state === 'stopped' ? [] : await call('/api/' + m.api + '/getActiveStreams', { id });
    fill(streams, list.length ? list.map((s) => h('tr', {},
      h('th', { scope: 'row', class: 'mono' }, s.stream_id), h('td', {}, s.publisher), h('td', {}, fmtTime(s.since)),
      h('td', { class: 'num' }, fmtKbps(s.bitrate)), h('td', { class: 'num' }, String(s.readers ?? '')),
      h('td', { class: 'num' }, s.rtt_ms !== undefined ? s.rtt_ms + ' ms' : '—'),
      h('td', { class: 'num' }, s.packets_lost ?? '—'), h('td', { class: 'num' }, s.retransmitted ?? '—')))
      : h('tr', {}, h('td', { colspan: 8, class: 'muted' }, 'Nothing is published now.')));
  };
  return view;
}
