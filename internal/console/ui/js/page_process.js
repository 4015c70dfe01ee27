// Players, restreams and recordings: the list (live state, input bitrate, last error), the
// create form, and the player and restream pages.
import { h, fill, stateBadge, fmtKbps, fmtTime, sparkline, copyRow } from './dom.js';
import { call } from './api.js';
import { modules, getRecord, leaveRecord, recordBitrate, bitrateHistory, lastBitrate, recordHead } from './modules.js';
import { listPage } from './list.js';

function summary(key, r) {
  if (key === 'players') return 'port ' + r.vod_port;
  if (key === 'restreams') return (r.restream_type || '').replace('RESTREAM_TYPE_', '').replace(/_/g, ' ');
  return r.output_format + (r.recording_type === 'RECORDING_STREAM_TO_MEMORY' ? ' in memory' : ' files');
}

export function processList(key) {
  const bitrateCell = (id, state) => h('td', { class: 'bitrate' }, h('span', { class: 'num' }, fmtKbps(state === 'stopped' ? 0 : lastBitrate(id))), ' ',
    sparkline(bitrateHistory(id), { label: 'input bitrate, last 2 minutes' }));
  const { view, table } = listPage(key, {
    columns: ['Details', 'Input bitrate'],
    cells: (r) => [h('td', {}, summary(key, r)), bitrateCell(r.id, r.state)],
  });
  // The bitrates, every 2 s: events do not carry them.
  view.sample = async () => {
    const stats = await call('/api/' + modules[key].api + '/getStat');
    for (const st of stats) {
      recordBitrate(st.id, st.bitrate);
      const e = table.rows.get(st.id);
      if (e) e.tr.querySelector('td.bitrate').replaceWith(bitrateCell(st.id, e.rec.state));
    }
  };
  return view;
}

export function processDetail(key, id) {
  const m = modules[key];
  const head = h('div', { class: 'page-head' });
  const status = h('div', { class: 'status-line' });
  const formBox = h('section', { class: 'form-box', hidden: true, 'aria-label': 'Edit' });
  const preview = h('div', { class: 'preview' });
  const info = h('div', { class: 'info' });
  const el = h('section', { class: 'page', dataset: { page: key + '-detail', id } }, head, status, formBox, preview, info);
  const view = { el, title: m.noun };
  let rec = null;
  let previewOn = null;
  let built = false;

  function buildStatic() {
    recordHead(head, formBox, key, rec, () => { built = false; view.reload(); });
    if (key === 'players') fill(info, playerInfo(rec));
    else fill(info, restreamInfo(rec));
    built = true;
  }

  const rate = h('span', { class: 'rate' });
  // The record: at first, on every event about it, and every 30 s (every 2 s while the event
  // stream is down).
  view.refresh = async () => {
    const prevActive = rec && rec.active;
    const got = await getRecord(key, id);
    if (!got) return;
    rec = got;
    if (!built || prevActive !== rec.active) buildStatic();
    el.dataset.state = rec.state;
    fill(status, stateBadge(rec.state), ' since ', fmtTime(rec.state_since), ' · input ', rate,
      ' · restarts ', String(rec.restarts || 0),
      rec.last_error ? h('p', { class: 'error-text' }, 'Last error: ' + rec.last_error) : null);
    if (key === 'players') {
      const on = rec.state !== 'stopped';
      if (on !== previewOn) {
        previewOn = on;
        fill(preview, on
          ? h('iframe', { src: '/hls/' + id + '/', title: 'Live preview of ' + rec.vod_name, class: 'preview-frame', allow: 'autoplay; fullscreen' })
          : h('p', { class: 'muted' }, 'The player is stopped: start it to see the preview.'));
      }
    }
  };
  view.onEvent = (ev) => {
    if (ev.module !== m.event || ev.id !== id) return null;
    if (ev.type === 'removed') {
      leaveRecord(key, id);
      return null;
    }
    if (ev.type === 'updated') built = false;
    return view.reload();
  };
  // Bitrate and frame rate, every 2 s: events do not carry them.
  view.sample = async () => {
    const stats = await call('/api/' + m.api + '/getStat');
    const st = stats.find((s) => s.id === id) || { bitrate: 0 };
    fill(rate, h('span', { class: 'num' }, fmtKbps(st.bitrate)), ' ', sparkline(recordBitrate(id, st.bitrate), { label: 'input bitrate' }),
      st.fps ? ' · ' + Number(st.fps).toFixed(1) + ' fps' : '');
  };
  return view;
}

function playerInfo(r) {
  const watch = new URL(r.hls_url).origin + '/';
  const snippet = '<iframe src="' + watch + '" width="960" height="540" allow="autoplay; fullscreen" allowfullscreen></iframe>';
  return [
    h('h2', {}, 'Addresses'),
    copyRow('Watch page (hls.js)', watch),
    copyRow('Watch page (dash.js)', watch + '?format=dash'),
    copyRow('HLS playlist', r.hls_url),
    copyRow('DASH manifest', r.dash_url),
    copyRow('Embed (iframe)', snippet),
    h('h2', {}, 'Settings'),
    h('dl', { class: 'kv' },
      kv('Input', r.input && r.input.input_type),
      kv('Port', r.vod_port),
      kv('Initial live manifest size', r.initial_live_manifest_size + ' segments'),
      kv('Live sync duration count', r.live_sync_duration_count + ' segments'),
      kv('HLS fragment / playlist', r.hls_fragment_size + ' s / ' + r.hls_fragment_length + ' s'),
      kv('DASH fragment / playlist', r.dash_fragment_size + ' s / ' + r.dash_fragment_length + ' s'),
      kv('Transcoding', r.transcoding && r.transcoding.video_transcoding ? r.transcoding.video_transcoding : 'none (passthrough)'),
      kv('Created', fmtTime(r.created)), kv('Modified', fmtTime(r.modified))),
  ];
}

function restreamInfo(r) {
  const inp = Array.isArray(r.input) ? r.input[0] : r.input || {};
  const out = Array.isArray(r.output) ? r.output[0] : r.output || {};
  return [
    h('h2', {}, 'Settings'),
    h('dl', { class: 'kv' },
      kv('Type', r.restream_type),
      kv('Input', inp.input_type + (inp.input_stream_url ? ' ' + inp.input_stream_url : '')),
      kv('Output', (out.output_type || '') + ' ' + (out.output_stream_url || '')),
      kv('Transcoding', r.transcoding && r.transcoding.video_transcoding ? r.transcoding.video_transcoding : 'none (passthrough)'),
      kv('Created', fmtTime(r.created)), kv('Modified', fmtTime(r.modified))),
  ];
}

export function kv(k, v) { return [h('dt', {}, k), h('dd', {}, v === undefined || v === null ? '—' : String(v))]; }
