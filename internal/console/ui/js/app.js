// sluice console: log-in, navigation (hash routes) and keeping the page shown current.
// Records follow the event stream (live.js): each page's onEvent updates a row in place or
// reads again what changed. Figures events do not carry (bitrates, CPU, the streams of a
// server module) are sampled every 2 s while their page is shown. Every page also reads all
// its records every 30 s, as a safety net, and every 2 s while the stream is down.
import { h, fill, toast } from './dom.js';
import * as api from './api.js';
import { startLive, stopLive, isLive, onLiveEvent, onLiveStatus } from './live.js';
import { dashboard } from './page_dashboard.js';
import { processList, processDetail } from './page_process.js';
import { recordingDetail } from './page_recording.js';
import { serverList, serverDetail } from './page_server.js';
import { speedtest } from './page_speedtest.js';

const SAMPLE_MS = 2000; // figures; and everything while the event stream is down
const SAFETY_MS = 30000; // everything, while the event stream is up

const nav = [
  ['#/dashboard', 'Dashboard'],
  ['#/players', 'Players'],
  ['#/restreams', 'Restreams'],
  ['#/recordings', 'Recordings'],
  ['#/srt-servers', 'SRT servers'],
  ['#/rtmp-servers', 'RTMP servers'],
  ['#/speedtest', 'Speed test'],
];

// routes: a hash path pattern and the page that renders it.
const routes = [
  [/^#\/dashboard$/, () => dashboard()],
  [/^#\/(players|restreams|recordings)$/, (m) => processList(m[1])],
  [/^#\/(players|restreams)\/([0-9a-f]{24})$/, (m) => processDetail(m[1], m[2])],
  [/^#\/recordings\/([0-9a-f]{24})$/, (m) => recordingDetail(m[1])],
  [/^#\/(srt-servers|rtmp-servers)$/, (m) => serverList(m[1])],
  [/^#\/(srt-servers|rtmp-servers)\/([0-9a-f]{24})$/, (m) => serverDetail(m[1], m[2])],
  [/^#\/speedtest$/, () => speedtest()],
];

const app = document.getElementById('app');
let current = null;
let timer = null;

function stop() {
  clearTimeout(timer);
  timer = null;
  if (current && current.destroy) current.destroy();
  current = null;
}

function report(err) {
  if (err && err.status !== 401) toast(err.message || String(err), 'error');
}

// serial makes view.reload: view.refresh, one at a time; a call while one runs asks for one
// more after it (however many calls came), so a burst of events costs two reads at most.
function serial(view) {
  let running = null;
  let again = false;
  return function reload() {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await view.refresh();
          view.lastFull = Date.now();
        } while (again && view === current);
      } finally {
        running = null;
      }
    })();
    return running;
  };
}

async function tick(view) {
  if (view !== current || !(view.refresh || view.sample)) return;
  try {
    const full = !view.lastFull || !isLive() || Date.now() - view.lastFull >= SAFETY_MS;
    if (full && view.refresh) await view.reload();
    if (view.sample && view === current) await view.sample(full);
    view.el.dataset.loaded = 'true';
  } catch (err) {
    report(err);
  }
  if (view === current) timer = setTimeout(() => tick(view), SAMPLE_MS);
}

onLiveEvent((ev) => {
  const view = current;
  if (!view || !view.onEvent) return;
  try {
    const p = view.onEvent(ev);
    if (p && p.catch) p.catch(report);
  } catch (err) {
    report(err);
  }
});

// liveBadge says in the header whether the console follows the event stream or polls.
const liveBadge = h('span', { id: 'live', class: 'live', role: 'status', dataset: { live: 'down' }, title: '' }, 'polling');
onLiveStatus((s, detail) => {
  liveBadge.dataset.live = s;
  liveBadge.textContent = s === 'up' ? 'live' : 'polling';
  liveBadge.title = s === 'up' ? 'Following the event stream' : 'Event stream down' + (detail ? ' (' + detail + ')' : '') + ': polling every 2 s';
  // Back up: read everything once, for what happened while it was down or connecting.
  if (s === 'up' && current && current.refresh) current.reload().catch(report);
});

function showLogin(message) {
  stop();
  stopLive();
  const user = h('input', { id: 'login-user', name: 'username', autocomplete: 'username', required: true, value: 'admin' });
  const pass = h('input', { id: 'login-pass', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const err = h('p', { class: 'form-error', role: 'alert', hidden: !message }, message || '');
  const btn = h('button', { type: 'submit', class: 'primary' }, 'Log in');
  const form = h('form', { class: 'login', 'aria-labelledby': 'login-title' },
    h('h1', { id: 'login-title' }, 'sluice'),
    h('p', { class: 'muted' }, 'Log in with the admin account (its password is printed at the first start).'),
    h('div', { class: 'field' }, h('label', { for: user.id }, 'User'), user),
    h('div', { class: 'field' }, h('label', { for: pass.id }, 'Password'), pass),
    err, btn);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    btn.disabled = true;
    err.hidden = true;
    try {
      await api.login(user.value.trim(), pass.value);
      pass.value = '';
      if (!location.hash || location.hash === '#/login') location.hash = '#/dashboard';
      showShell();
    } catch (e2) {
      err.textContent = e2.status === 401 ? 'Wrong user name or password.' : e2.message;
      err.hidden = false;
      pass.focus();
    } finally {
      btn.disabled = false;
    }
  });
  fill(app, h('main', { class: 'login-page' }, form));
  (user.value ? pass : user).focus();
}

let shell = null;

function showShell() {
  const links = nav.map(([href, label]) => h('a', { href, dataset: { nav: href.slice(2) } }, label));
  const menu = h('button', { type: 'button', class: 'menu-button', 'aria-expanded': 'false', 'aria-controls': 'nav' }, 'Menu');
  const navEl = h('nav', { id: 'nav', 'aria-label': 'Sections' }, links);
  menu.addEventListener('click', () => {
    const open = menu.getAttribute('aria-expanded') !== 'true';
    menu.setAttribute('aria-expanded', String(open));
    navEl.classList.toggle('open', open);
  });
  const out = h('button', { type: 'button', class: 'secondary', id: 'logout' }, 'Log out');
  out.addEventListener('click', async () => {
    stopLive();
    try { await api.logout(); } catch { /* the token is forgotten anyway */ }
    location.hash = '#/login';
    showLogin('You are logged out.');
  });
  const main = h('main', { id: 'main', tabindex: '-1' });
  shell = { main, links, navEl, menu };
  startLive();
  fill(app,
    h('a', { class: 'skip', href: '#main', onclick: (e) => { e.preventDefault(); main.focus(); } }, 'Skip to content'),
    h('header', { class: 'top' }, h('a', { class: 'brand', href: '#/dashboard' }, 'sluice'), menu, navEl, liveBadge, out),
    main,
    h('div', { id: 'toasts', 'aria-live': 'polite' }));
  route();
}

function route() {
  if (!api.hasToken()) {
    showLogin();
    return;
  }
  if (!shell || !document.body.contains(shell.main)) {
    showShell();
    return;
  }
  const hash = location.hash || '#/dashboard';
  stop();
  let view = null;
  for (const [re, make] of routes) {
    const m = hash.match(re);
    if (m) { view = make(m); break; }
  }
  if (!view) {
    location.replace('#/dashboard');
    return;
  }
  view.reload = serial(view);
  current = view;
  for (const a of shell.links) {
    const on = hash.startsWith(a.getAttribute('href'));
    if (on) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  shell.navEl.classList.remove('open');
  shell.menu.setAttribute('aria-expanded', 'false');
  fill(shell.main, view.el);
  document.title = (view.title ? view.title + ' · ' : '') + 'sluice console';
  tick(view);
}

api.setUnauthorizedHandler(() => showLogin('Your session ended; log in again.'));
window.addEventListener('hashchange', route);
route();
