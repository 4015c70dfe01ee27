// The list page of a kind of record (players, restreams, recordings, SRT and RTMP servers): a
// "New" button that opens the create form above the table, and the table of records kept
// current by the event stream (rows.js), one row a record: its name (a link to its page), its
// state, the kind's own columns, its last error and its actions.
import { h, fill, stateBadge, toast } from './dom.js';
import { call } from './api.js';
import { modules, recordForm, actionButtons } from './modules.js';
import { liveTable } from './rows.js';

// listPage: columns are the headers of the kind's own columns, cells(rec) their <td>s. It
// returns the view (el, title, reload, refresh, onEvent) and its table, for a page that adds
// to them.
export function listPage(key, { columns, cells }) {
  const m = modules[key];
  const formBox = h('section', { class: 'form-box', hidden: true, 'aria-label': 'New ' + m.noun });
  const body = h('tbody');
  const newBtn = h('button', { type: 'button', class: 'primary', id: 'new-record' }, 'New ' + m.noun);
  const headers = ['Name', 'State', ...columns, 'Last error', 'Actions'];
  const el = h('section', { class: 'page', dataset: { page: key } },
    h('div', { class: 'page-head' }, h('h1', {}, m.title), newBtn),
    formBox,
    h('div', { class: 'table-wrap' },
      h('table', { class: 'records' },
        h('caption', { class: 'sr-only' }, m.title + ', updated live'),
        h('thead', {}, h('tr', {}, headers.map((c) => h('th', { scope: 'col' }, c)))),
        body)));
  const view = { el, title: m.title };

  newBtn.addEventListener('click', async () => {
    if (!formBox.hidden) { formBox.hidden = true; return; }
    try {
      const form = await recordForm(key, null, (id) => {
        formBox.hidden = true;
        location.hash = '#/' + key + '/' + id;
      }, () => { formBox.hidden = true; newBtn.focus(); });
      fill(formBox, h('h2', {}, 'New ' + m.noun), form.el);
      formBox.hidden = false;
      form.el.querySelector('input, select').focus();
    } catch (err) { toast(err.message, 'error'); }
  });

  const table = liveTable({
    body, m, reload: () => view.reload(),
    empty: () => h('tr', {}, h('td', { colspan: headers.length, class: 'muted' }, 'No ' + m.noun + 's yet.')),
    row: (r) => h('tr', { dataset: { id: r.id, name: r[m.name], state: r.state } },
      h('th', { scope: 'row' }, h('a', { href: '#/' + key + '/' + r.id }, r[m.name])),
      h('td', {}, stateBadge(r.state)),
      ...cells(r),
      h('td', { class: 'error-text' }, r.last_error || ''),
      h('td', { class: 'actions' }, actionButtons(key, r, () => view.reload()))),
  });

  // The records: at first, on created and removed events, and every 30 s (every 2 s while the
  // event stream is down); state events update their row.
  view.refresh = async () => {
    const mark = table.mark();
    table.render(await call('/api/' + m.api + '/getAll'), mark);
  };
  view.onEvent = (ev) => table.apply(ev);
  return { view, table };
}
