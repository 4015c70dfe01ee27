// sluice console: log-in, navigation (hash routes) and the 2-second refresh of the page shown.
// Live state is polled; the event stream, once the API has one, can replace the timer.
import { h, fill, toast } from './dom.js';
import * as api from './api.js';
import { dashboard } from './page_dashboard.js';
import { processList, processDetail } from './page_process.js';
import { recordingDetail } from './page_recording.js';
import { serverList, serverDetail } from './page_server.js';
import { speedtest } from './page_speedtest.js';

const POLL_MS = 2000;

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

async function tick(view) {
  if (view !== current || !view.refresh) return;
  try {
    await view.refresh();
    view.el.dataset.loaded = 'true';
  } catch (err) {
    if (err.status !== 401) toast(err.message, 'error');
  }
  if (view === current) timer = setTimeout(() => tick(view), POLL_MS);
}

function showLogin(message) {
  stop();
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
    try { await api.logout(); } catch { /* the token is forgotten anyway */ }
    location.hash = '#/login';
    showLogin('You are logged out.');
  });
  const main = h('main', { id: 'main', tabindex: '-1' });
  shell = { main, links, navEl, menu };
  fill(app,
    h('a', { class: 'skip', href: '#main', onclick: (e) => { e.preventDefault(); main.focus(); } }, 'Skip to content'),
    h('header', { class: 'top' }, h('a', { class: 'brand', href: '#/dashboard' }, 'sluice'), menu, navEl, out),
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
