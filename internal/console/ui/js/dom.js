// Small DOM and formatting helpers. Elements are built with h(); text always goes in as text
// nodes (never innerHTML), so nothing a record holds can become markup.

// h(tag, attrs, ...children): attrs keys starting with "on" add listeners, "class" sets
// className, "dataset" an object of data-*, true/false toggle boolean attributes.
export function h(tag, attrs, ...children) {
  const el = tag.startsWith('svg:')
    ? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4))
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.setAttribute('class', v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'value' && 'value' in el) el.value = v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// clear empties an element and appends children.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// Formatting. Times are shown in the browser's time zone.
const dateFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
export function fmtTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return isNaN(d) ? String(iso) : dateFmt.format(d);
}

export function fmtBytes(n) {
  n = Number(n) || 0;
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
  return (i === 0 ? n : n.toFixed(n < 10 ? 2 : 1)) + ' ' + units[i];
}

export function fmtDuration(sec) {
  sec = Number(sec) || 0;
  const hh = Math.floor(sec / 3600), mm = Math.floor((sec % 3600) / 60), ss = Math.floor(sec % 60);
  const pad = (x) => String(x).padStart(2, '0');
  return (hh ? hh + ':' + pad(mm) : mm) + ':' + pad(ss);
}

export function fmtKbps(kbps) {
  kbps = Number(kbps) || 0;
  return kbps >= 1000 ? (kbps / 1000).toFixed(2) + ' Mbit/s' : Math.round(kbps) + ' kbit/s';
}

// stateBadge shows a process state with a label and a colour class.
export function stateBadge(state) {
  return h('span', { class: 'badge state-' + (state || 'unknown'), dataset: { state: state || '' } }, state || '—');
}

// copyButton copies text to the clipboard and says so.
export function copyButton(text, label) {
  const b = h('button', { type: 'button', class: 'small', 'aria-label': 'Copy ' + (label || text) }, 'Copy');
  b.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
      b.textContent = 'Copied';
    } catch {
      b.textContent = 'Select and copy';
    }
    setTimeout(() => { b.textContent = 'Copy'; }, 1500);
  });
  return b;
}

// copyRow is a labelled read-only value with a copy button.
export function copyRow(label, text) {
  const id = 'copy-' + Math.random().toString(36).slice(2);
  return h('div', { class: 'copy-row' },
    h('label', { for: id }, label),
    h('input', { id, type: 'text', readonly: true, value: text, class: 'mono' }),
    copyButton(text, label));
}

// confirmDialog asks a yes/no question in a modal <dialog> (Escape cancels); resolves to a bool.
export function confirmDialog(question, action) {
  return new Promise((resolve) => {
    const dlg = h('dialog', { class: 'confirm', 'aria-labelledby': 'confirm-q' },
      h('p', { id: 'confirm-q' }, question),
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'secondary', value: 'no', onclick: () => dlg.close('no') }, 'Cancel'),
        h('button', { type: 'button', class: 'danger', value: 'yes', onclick: () => dlg.close('yes') }, action || 'Confirm')));
    dlg.addEventListener('close', () => { dlg.remove(); resolve(dlg.returnValue === 'yes'); });
    document.body.append(dlg);
    dlg.showModal();
    dlg.querySelector('.secondary').focus();
  });
}

// toast shows a short message in the page's live region.
export function toast(msg, kind) {
  const box = document.getElementById('toasts');
  if (!box) return;
  const t = h('div', { class: 'toast ' + (kind || 'info'), role: kind === 'error' ? 'alert' : 'status' }, msg);
  box.append(t);
  setTimeout(() => t.remove(), kind === 'error' ? 8000 : 4000);
}

// sparkline draws values (oldest first) as an SVG polyline scaled to its maximum.
export function sparkline(values, opts) {
  const w = (opts && opts.width) || 120, hgt = (opts && opts.height) || 24;
  const max = Math.max(1e-9, (opts && opts.max) || Math.max(...values, 0));
  const n = Math.max(values.length, 2);
  const pts = values.map((v, i) => (i * w / (n - 1)).toFixed(1) + ',' + (hgt - 1 - (Math.min(v, max) / max) * (hgt - 2)).toFixed(1));
  const svg = h('svg:svg', { viewBox: `0 0 ${w} ${hgt}`, width: w, height: hgt, class: 'spark', role: 'img',
    'aria-label': (opts && opts.label) || 'history', preserveAspectRatio: opts && opts.stretch ? 'none' : undefined });
  svg.append(h('svg:polyline', { points: pts.join(' '), fill: 'none', stroke: 'currentColor', 'stroke-width': 1.5,
    'vector-effect': 'non-scaling-stroke' }));
  return svg;
}
