// The API client. The token lives in memory and in sessionStorage (so a reload of the tab keeps
// the session, a new tab or a closed browser does not); it travels only in the x-access-token
// header, never in a URL. Downloads are fetched with the header and handed to the browser as
// blob: URLs.

const KEY = 'sluice.token';
let token = null;
try { token = sessionStorage.getItem(KEY); } catch { token = null; }
let onUnauthorized = () => {};

export function hasToken() { return !!token; }
export function setUnauthorizedHandler(fn) { onUnauthorized = fn; }

// authHeaders are the headers that carry the token, for requests made outside send() (the
// event stream's).
export function authHeaders() { return token ? { 'x-access-token': token } : {}; }

// expire forgets a token the server refused and shows the log-in form.
export function expire() {
  store(null);
  onUnauthorized(new ApiError(401, null));
}

function store(t) {
  token = t;
  try {
    if (t) sessionStorage.setItem(KEY, t); else sessionStorage.removeItem(KEY);
  } catch { /* storage disabled: memory only */ }
}

// ApiError carries the API's error body: code, message and the field at fault.
export class ApiError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || 'HTTP ' + status);
    this.status = status;
    this.code = e.code || '';
    this.field = e.field || '';
  }
}

async function send(method, path, body) {
  const headers = { accept: 'application/json' };
  if (token) headers['x-access-token'] = token;
  const init = { method, headers, cache: 'no-store' };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  let data = null;
  const text = await res.text();
  if (text) {
    try { data = JSON.parse(text); } catch { data = { error: { message: text.slice(0, 300) } }; }
  }
  if (!res.ok) {
    const err = new ApiError(res.status, data);
    if (res.status === 401 && path !== '/api/auth/login') {
      store(null);
      onUnauthorized(err);
    }
    throw err;
  }
  return data;
}

// call POSTs (or method) a JSON body to an API path and returns the parsed answer.
export function call(path, body, method) { return send(method || 'POST', path, body === undefined ? {} : body); }

export async function login(user, password) {
  const res = await send('POST', '/api/auth/login', { email: user, password });
  store(res.token);
}

export async function logout() {
  try { await send('POST', '/api/auth/logout', {}); } finally { store(null); }
}

// fetchBlob GETs a file with the token in the header and returns it as a Blob.
export async function fetchBlob(path, onProgress) {
  const res = await fetch(path, { headers: { 'x-access-token': token || '' }, cache: 'no-store' });
  if (!res.ok) {
    let body = null;
    try { body = await res.json(); } catch { body = null; }
    throw new ApiError(res.status, body);
  }
  const total = Number(res.headers.get('content-length')) || 0;
  if (!res.body || !onProgress) return res.blob();
  const reader = res.body.getReader();
  const parts = [];
  let got = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    got += value.length;
    onProgress(got, total);
  }
  return new Blob(parts, { type: res.headers.get('content-type') || 'application/octet-stream' });
}

// saveBlob offers a Blob to the user as a file download.
export function saveBlob(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

let openapi = null;
// schemas returns the OpenAPI document's component schemas (public, fetched once).
export async function schemas() {
  if (!openapi) {
    const res = await fetch('/api/openapi.json', { headers: { accept: 'application/json' } });
    if (!res.ok) throw new Error('cannot read /api/openapi.json: HTTP ' + res.status);
    openapi = (await res.json()).components.schemas;
  }
  return openapi;
}
