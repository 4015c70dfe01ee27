// What the pages know of each module: its API path, nouns and the name field.
import { call, schemas } from './api.js';
import { h, fill, confirmDialog, toast } from './dom.js';
import { forms } from './schema.js';
import { buildForm } from './forms.js';

// event is the module's name in the event stream's documents.
export const modules = {
  players: { api: 'vod', event: 'MODULE_VOD', noun: 'player', title: 'Players', name: 'vod_name', process: true },
  restreams: { api: 'restream', event: 'MODULE_RESTREAM', noun: 'restream', title: 'Restreams', name: 'restream_name', process: true },
  recordings: { api: 'recording', event: 'MODULE_RECORDING', noun: 'recording', title: 'Recordings', name: 'recording_name', process: true },
  'srt-servers': { api: 'srt-servers', event: 'MODULE_SRT_SERVERS', noun: 'SRT server', title: 'SRT servers', name: 'server_name' },
  'rtmp-servers': { api: 'rtmp-servers', event: 'MODULE_RTMP_SERVERS', noun: 'RTMP server', title: 'RTMP servers', name: 'server_name' },
};

// History of each process's input bitrate (kbit/s), for the sparklines: the last 60 samples
// (two minutes: the page shown samples getStat every 2 s).
const HISTORY = 60;
const bitrates = new Map();
export function recordBitrate(id, kbps) {
  const a = bitrates.get(id) || [];
  a.push(Number(kbps) || 0);
  if (a.length > HISTORY) a.shift();
  bitrates.set(id, a);
  return a;
}
export function bitrateHistory(id) { return bitrates.get(id) || []; }
export function lastBitrate(id) { const a = bitrates.get(id); return a && a.length ? a[a.length - 1] : 0; }

// getRecord reads a record for its page; when it is gone (removed here or elsewhere: its
// removal's events may still be arriving) it goes back to the module's list and returns null.
export async function getRecord(key, id) {
  try {
    return await call('/api/' + modules[key].api + '/getById', { id });
  } catch (err) {
    if (err.status !== 404) throw err;
    leaveRecord(key, id);
    return null;
  }
}

// leaveRecord goes back to the list page of key (a module's, or 'recordings') when the page
// shown is still the record id's: a removal's answer or event that arrives late must not take
// the user away from the page they went on to.
export function leaveRecord(key, id) {
  if (location.hash.endsWith('/' + id)) location.hash = '#/' + key;
}

// servers lists the SRT and RTMP server modules, for server-fed inputs.
export async function serverChoices() {
  const [srt, rtmp] = await Promise.all([call('/api/srt-servers/getAll'), call('/api/rtmp-servers/getAll')]);
  return [
    ...srt.map((s) => ({ id: s.id, name: s.server_name, port: s.server_port, kind: 'srt' })),
    ...rtmp.map((s) => ({ id: s.id, name: s.server_name, port: s.server_port, kind: 'rtmp' })),
  ];
}

// freePort is the first port from start up not held by an entity of the service.
export async function freePort(start) {
  const claims = await call('/api/ports/getAll');
  const held = new Set(claims.filter((c) => c.transport === 'TCP').map((c) => c.port));
  let p = start;
  while (held.has(p) && p < 65535) p++;
  return p;
}

// recordForm builds the create or edit form of a module; record is the record being edited.
export async function recordForm(key, record, done, cancel) {
  const m = modules[key];
  const spec = forms[key];
  const [sch, servers] = await Promise.all([schemas(), spec.sections.some((s) => s.title === 'Input') ? serverChoices() : []]);
  let values = record ? normalise(record) : {};
  if (!record) {
    const portField = spec.sections.flatMap((s) => s.fields).find((f) => f.freePort);
    if (portField) values = { ...values, [portField.key]: await freePort(portField.value) };
  }
  const form = buildForm({
    spec, schemas: sch, values, ctx: { servers },
    submitLabel: record ? 'Save ' + m.noun : 'Create ' + m.noun,
    onCancel: cancel,
    onSubmit: async (body) => {
      if (record) {
        body.id = record.id;
        await call('/api/' + m.api + '/update', body);
        toast('Saved ' + (body[m.name] || m.noun) + '.');
        done(record.id);
      } else {
        const res = await call('/api/' + m.api + '/create', body);
        toast('Created ' + (body[m.name] || m.noun) + '.');
        done(res.id);
      }
    },
  });
  return form;
}

// normalise turns a read record into form values (a restream reads input and output as arrays).
function normalise(rec) {
  const v = { ...rec };
  if (Array.isArray(v.input)) v.input = v.input[0];
  if (Array.isArray(v.output)) v.output = v.output[0];
  return v;
}

// actionButtons: start/stop and remove, with a confirmation for each.
export function actionButtons(key, rec, after) {
  const m = modules[key];
  const name = rec[m.name];
  const running = rec.active;
  const toggle = h('button', { type: 'button', class: 'small', dataset: { action: running ? 'stop' : 'start' } },
    running ? 'Stop' : 'Start');
  toggle.addEventListener('click', async () => {
    const verb = running ? 'stop' : 'start';
    if (!(await confirmDialog((running ? 'Stop ' : 'Start ') + m.noun + ' “' + name + '”?', running ? 'Stop' : 'Start'))) return;
    try {
      await call('/api/' + m.api + '/' + verb, { id: rec.id });
      toast((running ? 'Stopped ' : 'Started ') + name + '.');
    } catch (err) { toast(err.message, 'error'); }
    after();
  });
  const remove = h('button', { type: 'button', class: 'small danger', dataset: { action: 'remove' } }, 'Remove');
  remove.addEventListener('click', async () => {
    if (!(await confirmDialog('Remove ' + m.noun + ' “' + name + '”? This cannot be undone.', 'Remove'))) return;
    try {
      await call('/api/' + m.api + '/remove', { id: rec.id }, 'DELETE');
      toast('Removed ' + name + '.');
      after(true);
    } catch (err) { toast(err.message, 'error'); after(); }
  });
  return [toggle, remove];
}

// recordHead fills head with a record page's title (the module's list, then the record's name)
// and its Edit, start or stop, and remove buttons; the edit form opens in formBox. changed runs
// after a save, a start or a stop; a removal leaves the page.
export function recordHead(head, formBox, key, rec, changed) {
  const m = modules[key];
  const editBtn = h('button', { type: 'button', class: 'secondary' }, 'Edit');
  editBtn.addEventListener('click', async () => {
    if (!formBox.hidden) { formBox.hidden = true; return; }
    try {
      const form = await recordForm(key, rec, () => { formBox.hidden = true; changed(); },
        () => { formBox.hidden = true; });
      fill(formBox, h('h2', {}, 'Edit ' + m.noun), form.el);
      formBox.hidden = false;
    } catch (err) { toast(err.message, 'error'); }
  });
  fill(head, h('h1', {}, h('a', { href: '#/' + key, class: 'up' }, m.title), ' / ', rec[m.name]),
    h('div', { class: 'actions' }, editBtn, actionButtons(key, rec, (gone) => {
      if (gone) leaveRecord(key, rec.id); else changed();
    })));
}
