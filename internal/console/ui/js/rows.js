// A table of records kept current by the event stream: its rows by record id. A state event
// updates its row in place; started, stopped and updated fetch that record again; created and
// removed, or an event about a record the table does not show, reload the list.
import { fill } from './dom.js';
import { call } from './api.js';

// liveTable: body is the <tbody>; m the module (modules.js); row(rec) makes a <tr>; empty()
// what an empty list shows; reload() the page's (serialised) full refresh.
export function liveTable({ body, m, row, empty, reload }) {
  const rows = new Map(); // id → { rec, tr }
  // The newest state event of each record, numbered: an answer to a request made before it
  // arrived must not put an older state back.
  const latest = new Map();
  let seq = 0;

  function overlay(rec, mark) {
    const l = latest.get(rec.id);
    if (l && l.n > mark) Object.assign(rec, l.fields);
    return rec;
  }

  function replace(rec) {
    const e = rows.get(rec.id);
    if (!e) return;
    const tr = row(rec);
    e.tr.replaceWith(tr);
    rows.set(rec.id, { rec, tr });
  }

  return {
    rows,
    // mark is taken before a request for records, and given back with its answer.
    mark: () => seq,
    render(recs, mark) {
      rows.clear();
      if (!recs.length) {
        fill(body, empty());
        return;
      }
      fill(body, recs.map((r) => {
        overlay(r, mark);
        const tr = row(r);
        rows.set(r.id, { rec: r, tr });
        return tr;
      }));
    },
    // apply handles one event; it returns a promise when it fetches, else null.
    apply(ev) {
      if (ev.module !== m.event || !ev.id) return null;
      const e = rows.get(ev.id);
      switch (ev.type) {
        case 'state': {
          const fields = { state: ev.state, last_error: ev.last_error || '', restarts: ev.restarts || 0, state_since: ev.time };
          latest.set(ev.id, { n: ++seq, fields });
          if (!e) return reload();
          replace({ ...e.rec, ...fields });
          return null;
        }
        case 'started':
        case 'stopped':
        case 'updated': {
          if (!e) return reload();
          const mark = seq;
          return call('/api/' + m.api + '/getById', { id: ev.id }).then((rec) => replace(overlay(rec, mark)),
            (err) => { if (err.status === 404) return reload(); throw err; });
        }
        case 'created':
          return reload();
        case 'removed':
          latest.delete(ev.id);
          return reload();
        default:
          return null;
      }
    },
  };
}
