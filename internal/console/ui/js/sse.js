// Server-Sent Events read with fetch(). The console follows GET /api/events with its token in
// the x-access-token header: EventSource cannot send a header, and the token never goes into a
// URL. So this file does what EventSource would: it parses the text/event-stream format from
// the response body (id, event, data and retry fields, comments; LF, CR or CRLF line ends),
// reconnects after a drop with Last-Event-ID and a growing delay, and says whether the stream
// is up. It touches no DOM and imports nothing (the console's Go tests run it under Node).

// Caps on what the server may send: a longer line, or more data in one event, ends the
// connection (and the stream reconnects). sluice's events are a few hundred bytes.
export const MAX_LINE = 64 * 1024;
export const MAX_EVENT = 256 * 1024;

// SSEError is a stream that broke the format's rules or the caps.
export class SSEError extends Error {}

// SSEParser turns chunks of text into events: onEvent({id, type, data}) at each blank line
// that ends an event with data; onComment(text) for comment lines; onRetry(ms) for retry.
// id is the last id the stream set (it carries over to events without an id line).
// committedId is that id as of the last blank line: what a resume asks for (an event cut off
// before its blank line is asked for again).
export class SSEParser {
  constructor(handlers, caps) {
    this.onEvent = handlers.onEvent || (() => {});
    this.onComment = handlers.onComment || (() => {});
    this.onRetry = handlers.onRetry || (() => {});
    this.maxLine = (caps && caps.maxLine) || MAX_LINE;
    this.maxEvent = (caps && caps.maxEvent) || MAX_EVENT;
    this.lastId = '';
    this.committedId = '';
    this.pending = '';
    this.skipLF = false;
    this.type = '';
    this.data = [];
    this.size = 0;
  }

  // push feeds the next piece of decoded text; it throws SSEError past a cap.
  push(text) {
    let start = 0;
    if (this.skipLF && text.length > 0) {
      if (text.charCodeAt(0) === 10) start = 1;
      this.skipLF = false;
    }
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const line = this.pending + text.slice(start, i);
      this.pending = '';
      if (line.length > this.maxLine) throw new SSEError('a line of ' + line.length + ' characters (the cap is ' + this.maxLine + ')');
      if (c === 13) {
        if (i + 1 === text.length) this.skipLF = true;
        else if (text.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
      this.line(line);
    }
    if (start < text.length) {
      this.pending += text.slice(start);
      if (this.pending.length > this.maxLine) {
        throw new SSEError('a line of over ' + this.maxLine + ' characters without an end');
      }
    }
  }

  line(l) {
    if (l === '') {
      this.dispatch();
      return;
    }
    if (l.charCodeAt(0) === 58) { // ':'
      this.onComment(l.slice(1).replace(/^ /, ''));
      return;
    }
    const colon = l.indexOf(':');
    let field = l;
    let value = '';
    if (colon >= 0) {
      field = l.slice(0, colon);
      value = l.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
    }
    switch (field) {
      case 'event':
        this.type = value;
        break;
      case 'data':
        this.size += value.length + 1;
        if (this.size > this.maxEvent) throw new SSEError('an event of over ' + this.maxEvent + ' characters of data');
        this.data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      case 'retry':
        if (/^[0-9]{1,9}$/.test(value)) this.onRetry(Number(value));
        break;
      default: // unknown fields are ignored
    }
  }

  dispatch() {
    this.committedId = this.lastId;
    const data = this.data;
    const type = this.type || 'message';
    this.data = [];
    this.type = '';
    this.size = 0;
    if (data.length === 0) return;
    this.onEvent({ id: this.lastId, type, data: data.join('\n') });
  }
}

// Defaults of EventStream's timing.
export const DEFAULTS = {
  minDelay: 1000, // first reconnect delay, unless the server's retry asks for more
  maxDelay: 30000, // the delay doubles after each failed attempt up to this
  maxRetryAfter: 60000, // a 503's Retry-After is obeyed up to this
  stall: 45000, // no byte for this long (the server sends a comment every 15 s): reconnect
  steady: 10000, // a connection that lasted this long resets the delay
};

// EventStream follows one event stream until stop(). Options:
//   url; headers() → extra request headers (the token); fetch (default globalThis.fetch);
//   onEvent({id, type, data}); onStatus('up' | 'down' | 'closed', detail);
//   onRefused(status) for 401 and 403, after which the stream stops;
//   minDelay, maxDelay, maxRetryAfter, stall, steady (ms); maxLine, maxEvent.
export class EventStream {
  constructor(opts) {
    this.o = { ...DEFAULTS, headers: () => ({}), onEvent: () => {}, onStatus: () => {}, onRefused: () => {}, ...opts };
    this.fetch = this.o.fetch || globalThis.fetch.bind(globalThis);
    this.lastId = '';
    this.retry = 0; // the server's retry field, ms
    this.failures = 0;
    this.status = 'down';
    this.stopped = true;
    this.ctl = null;
    this.timer = null;
    this.lastError = '';
  }

  start() {
    if (!this.stopped) return;
    this.stopped = false;
    this.connect();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = null;
    if (this.ctl) this.ctl.abort();
    this.ctl = null;
    this.setStatus('closed', 'stopped');
  }

  setStatus(s, detail) {
    if (s === this.status) return;
    this.status = s;
    this.o.onStatus(s, detail || '');
  }

  async connect() {
    if (this.stopped) return;
    const ctl = new AbortController();
    this.ctl = ctl;
    const began = Date.now();
    let retryAfter = 0;
    try {
      const headers = { accept: 'text/event-stream', ...this.o.headers() };
      if (this.lastId) headers['last-event-id'] = this.lastId;
      const res = await this.fetch(this.o.url, { headers, signal: ctl.signal, cache: 'no-store' });
      if (res.status === 401 || res.status === 403) {
        ctl.abort();
        this.o.onRefused(res.status);
        this.stop();
        return;
      }
      const ctype = res.headers.get('content-type') || '';
      if (!res.ok || !res.body || !ctype.startsWith('text/event-stream')) {
        retryAfter = Number(res.headers.get('retry-after')) * 1000 || 0;
        ctl.abort();
        throw new Error('HTTP ' + res.status + (res.ok ? ' ' + ctype : ''));
      }
      await this.read(res.body, ctl);
    } catch (err) {
      this.lastError = (err && err.message) || String(err);
    } finally {
      if (this.ctl === ctl) this.ctl = null;
    }
    if (this.stopped) return;
    this.setStatus('down', this.lastError);
    if (Date.now() - began >= this.o.steady) this.failures = 0;
    this.timer = setTimeout(() => this.connect(), this.delay(retryAfter));
  }

  // delay is the wait before the next attempt: the base (the server's retry, at least
  // minDelay) doubled per failure up to maxDelay, less up to a quarter at random so that
  // many consoles do not come back at once; a Retry-After overrides it when longer.
  delay(retryAfter) {
    const base = Math.min(Math.max(this.o.minDelay, this.retry), this.o.maxDelay);
    const d = Math.min(base * 2 ** Math.min(this.failures, 16), this.o.maxDelay);
    this.failures++;
    const wait = d * (0.75 + Math.random() * 0.25);
    return Math.max(wait, Math.min(retryAfter, this.o.maxRetryAfter));
  }

  async read(body, ctl) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    const parser = new SSEParser({
      onEvent: (ev) => {
        // A handler's bug is not the stream's: it must not cost the connection.
        try { this.o.onEvent(ev); } catch (err) { console.error('event handler:', err); }
      },
      onRetry: (ms) => { this.retry = ms; },
    }, this.o);
    parser.lastId = this.lastId;
    parser.committedId = this.lastId;
    let stalled = false;
    let watchdog = null;
    const arm = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => { stalled = true; ctl.abort(); }, this.o.stall);
    };
    this.setStatus('up');
    arm();
    try {
      for (;;) {
        let chunk;
        try {
          chunk = await reader.read();
        } catch (err) {
          throw stalled ? new Error('no data for ' + this.o.stall + ' ms') : err;
        }
        if (chunk.done) throw new Error('the server ended the stream');
        arm();
        try {
          parser.push(decoder.decode(chunk.value, { stream: true }));
        } finally {
          this.lastId = parser.committedId;
        }
      }
    } finally {
      clearTimeout(watchdog);
      reader.cancel().catch(() => {});
      ctl.abort();
    }
  }
}
