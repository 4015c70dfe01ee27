// The console's one connection to the event stream (GET /api/events), shared by every page:
// opened at log-in, closed at log-out. Pages are told each event's document (event_id, type,
// module, id, name and the type's fields) and whether the stream is up; while it is down the
// app polls instead (app.js).
import { EventStream } from './sse.js';
import { authHeaders, expire } from './api.js';

const listeners = new Set();
const watchers = new Set();
let stream = null;
let status = 'down';

// startLive opens the stream (once).
export function startLive() {
  if (stream) return;
  stream = new EventStream({
    url: '/api/events',
    headers: authHeaders,
    onEvent: (ev) => {
      let doc = null;
      try { doc = JSON.parse(ev.data); } catch { return; }
      if (!doc || typeof doc !== 'object' || typeof doc.type !== 'string') return;
      for (const fn of listeners) fn(doc);
    },
    onStatus: (s, detail) => {
      status = s;
      for (const fn of watchers) fn(s, detail);
    },
    // The token was revoked or expired while the console was open.
    onRefused: () => expire(),
  });
  stream.start();
}

// stopLive closes the stream.
export function stopLive() {
  if (!stream) return;
  const s = stream;
  stream = null;
  s.stop();
}

// isLive tells whether events are arriving now.
export function isLive() { return status === 'up'; }

// onLiveEvent calls fn with every event's document; it returns the function that stops that.
export function onLiveEvent(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

// onLiveStatus calls fn(status, detail) when the stream goes 'up', 'down' or 'closed'.
export function onLiveStatus(fn) {
  watchers.add(fn);
  return () => watchers.delete(fn);
}
