// A recording's page: its files (size, duration, state) with download, play in the browser and
// remove. Files are fetched with the token in a header and handed over as blob: URLs; the token
// never goes into a URL.
import { h, fill, stateBadge, fmtBytes, fmtDuration, fmtTime, fmtKbps, sparkline, confirmDialog, toast } from './dom.js';
import { call, fetchBlob, saveBlob } from './api.js';
import { modules, getRecord, leaveRecord, recordBitrate, recordHead } from './modules.js';
import { kv } from './page_process.js';

export function recordingDetail(id) {
  const key = 'recordings';
  const m = modules[key];
  const head = h('div', { class: 'page-head' });
  const status = h('div', { class: 'status-line' });
  const formBox = h('section', { class: 'form-box', hidden: true, 'aria-label': 'Edit' });
  const files = h('tbody');
  const player = h('div', { class: 'player-box', hidden: true });
  const info = h('dl', { class: 'kv' });
  const memory = h('div');
  const el = h('section', { class: 'page', dataset: { page: 'recording-detail', id } }, head, status, formBox,
    h('h2', {}, 'Files'), memory,
    h('div', { class: 'table-wrap' }, h('table', { class: 'records files' },
      h('caption', { class: 'sr-only' }, 'Recorded files'),
      h('thead', {}, h('tr', {}, ['File', 'State', 'Size', 'Duration', 'Started', 'Ended', 'Actions'].map((c) => h('th', { scope: 'col' }, c)))),
      files)),
    player, h('h2', {}, 'Settings'), info);
  const view = { el, title: 'recording' };
  let rec = null;
  let lastActive = null;
  let playURL = null;

  view.destroy = () => { if (playURL) URL.revokeObjectURL(playURL); };

  async function play(f) {
    const bar = h('progress', { max: 1, value: 0, 'aria-label': 'Loading ' + f.name });
    fill(player, h('h2', {}, 'Playing ' + f.name), bar);
    player.hidden = false;
    try {
      const blob = await fetchBlob('/api/recording/download/' + f.id, (got, total) => { if (total) bar.value = got / total; });
      if (playURL) URL.revokeObjectURL(playURL);
      playURL = URL.createObjectURL(blob);
      const video = h('video', { controls: true, autoplay: true, muted: true, playsinline: true, src: playURL, class: 'file-video',
        'aria-label': f.name });
      fill(player, h('h2', {}, 'Playing ' + f.name), video,
        h('p', { class: 'muted' }, 'Browsers play mp4 and mov (H.264/AAC); flv and avi need a desktop player.'));
    } catch (err) {
      fill(player, h('p', { class: 'error-text' }, 'Cannot load ' + f.name + ': ' + err.message));
    }
  }

  async function download(f, btn) {
    btn.disabled = true;
    const label = btn.textContent;
    try {
      const blob = await fetchBlob('/api/recording/download/' + f.id, (got, total) => {
        btn.textContent = total ? Math.round(100 * got / total) + ' %' : fmtBytes(got);
      });
      saveBlob(blob, f.name || f.path.split('/').pop());
    } catch (err) {
      toast('Download failed: ' + err.message, 'error');
    } finally {
      btn.disabled = false;
      btn.textContent = label;
    }
  }

  function fileRow(f) {
    const dl = h('button', { type: 'button', class: 'small', dataset: { action: 'download' } }, 'Download');
    dl.addEventListener('click', () => download(f, dl));
    const pl = h('button', { type: 'button', class: 'small', dataset: { action: 'play' } }, 'Play');
    pl.addEventListener('click', () => play(f));
    const rm = h('button', { type: 'button', class: 'small danger', dataset: { action: 'remove-file' } }, 'Remove file');
    rm.addEventListener('click', async () => {
      if (!(await confirmDialog('Delete the file “' + f.name + '” from disk?', 'Delete'))) return;
      try {
        await call('/api/recording/removeFile', { record_id: id, file_id: f.id });
        toast('Deleted ' + f.name + '.');
      } catch (err) { toast(err.message, 'error'); }
      view.reload();
    });
    return h('tr', { dataset: { fileId: f.id, state: f.state } },
      h('th', { scope: 'row', class: 'mono' }, f.name || f.path),
      h('td', {}, stateBadge(f.state)),
      h('td', { class: 'num' }, fmtBytes(f.size)),
      h('td', { class: 'num' }, fmtDuration(f.duration)),
      h('td', {}, fmtTime(f.created)),
      h('td', {}, f.ended ? fmtTime(f.ended) : '—'),
      h('td', { class: 'actions' }, dl, pl, rm));
  }

  const rate = h('span', { class: 'rate' });
  // The record and its files: at first, on every event about it (state, file opened, closed,
  // repaired or removed), and every 30 s (every 2 s while the event stream is down).
  view.refresh = async () => {
    const got = await getRecord(key, id);
    if (!got) return;
    rec = got;
    el.dataset.state = rec.state;
    if (lastActive !== rec.active) {
      lastActive = rec.active;
      recordHead(head, formBox, key, rec, () => { lastActive = null; view.reload(); });
    }
    fill(status, stateBadge(rec.state), ' since ', fmtTime(rec.state_since), ' · input ', rate,
      rec.last_error ? h('p', { class: 'error-text' }, 'Last error: ' + rec.last_error) : null);
    const list = rec.recordedFiles || [];
    fill(files, list.length ? list.map(fileRow) : h('tr', {}, h('td', { colspan: 7, class: 'muted' }, 'No files yet.')));
    if (rec.recording_type === 'RECORDING_STREAM_TO_MEMORY') {
      if (!memory.firstChild) {
        const b = h('button', { type: 'button', class: 'secondary' }, 'Download what memory holds (mp4)');
        b.addEventListener('click', async () => {
          try { saveBlob(await fetchBlob('/api/recording/download-memory/' + id), rec.recording_name + '.mp4'); } catch (err) { toast(err.message, 'error'); }
        });
        memory.append(b);
      }
    }
    fill(info, kv('Kind', rec.recording_type), kv('Format', rec.output_format),
      kv('Input', rec.input && rec.input.input_type), kv('Created', fmtTime(rec.created)), kv('Modified', fmtTime(rec.modified)));
  };
  view.onEvent = (ev) => {
    if (ev.module !== m.event || ev.id !== id) return null;
    if (ev.type === 'removed') {
      leaveRecord('recordings', id);
      return null;
    }
    if (ev.type === 'updated') lastActive = null;
    return view.reload();
  };
  // The input bitrate, every 2 s, and while it records the files (their size and duration
  // grow): events do not carry these. fresh: the record was just read.
  view.sample = async (fresh) => {
    if (!fresh && rec && rec.state !== 'stopped') await view.reload();
    const stats = await call('/api/recording/getStat');
    const st = stats.find((s) => s.id === id) || { bitrate: 0 };
    fill(rate, h('span', { class: 'num' }, fmtKbps(st.bitrate)), ' ', sparkline(recordBitrate(id, st.bitrate), { label: 'input bitrate' }));
  };
  return view;
}
