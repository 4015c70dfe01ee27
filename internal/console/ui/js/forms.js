// The form generator: a layout from schema.js plus the OpenAPI schemas gives labelled,
// keyboard-operable fields with the API's ranges, enums and required fields as HTML
// constraints; the API's 400 answers are shown next to the field they name.
import { h, fill } from './dom.js';
import { LISTEN_TRANSPORT, ENUM_LABELS } from './schema.js';

function deref(schemas, s) {
  while (s && s.$ref) s = schemas[s.$ref.split('/').pop()];
  if (s && s.oneOf && !s.type) {
    // input/output of a restream: one object or an array of one.
    const obj = s.oneOf.find((o) => o.$ref || o.type === 'object');
    if (obj) return deref(schemas, obj);
  }
  return s;
}

// resolve finds a field's schema ("Input.input_stream_listen_port.port") and whether its
// parent object requires it.
export function resolve(schemas, path) {
  const [comp, ...rest] = path.split('.');
  let s = deref(schemas, schemas[comp]);
  let required = false;
  for (const k of rest) {
    const parent = s;
    s = parent && parent.properties ? deref(schemas, parent.properties[k]) : undefined;
    required = !!(parent && parent.required && parent.required.includes(k));
  }
  return { s: s || {}, required };
}

function types(s) { return Array.isArray(s.type) ? s.type : [s.type]; }

function get(obj, path) {
  return path.split('.').reduce((o, k) => (o === undefined || o === null ? undefined : o[k]), obj);
}

function set(obj, path, v) {
  const keys = path.split('.');
  let o = obj;
  for (const k of keys.slice(0, -1)) o = (o[k] = o[k] || {});
  o[keys[keys.length - 1]] = v;
}

let seq = 0;

// buildForm returns {el, showError, values}. spec is a layout of schema.js; values the record
// being edited (or recommended values for a create); ctx.servers the server modules for
// server-fed inputs; onSubmit(body) is awaited and its ApiError shown.
export function buildForm({ spec, schemas, values, submitLabel, onSubmit, onCancel, ctx }) {
  const form = h('form', { class: 'record-form', 'aria-label': submitLabel });
  const formError = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const fields = [];
  const optionals = [];
  const id = 'f' + (++seq);

  for (const section of spec.sections) {
    const fs = h('fieldset', { class: 'section' }, h('legend', {}, section.title));
    let toggle = null;
    if (section.optional) {
      const on = !!(values && values[section.optional] && Object.values(values[section.optional]).some((v) => v !== '' && v !== 'Disabled' && v !== 0));
      toggle = h('input', { type: 'checkbox', id: id + '-opt-' + section.optional, checked: on });
      const lbl = h('label', { for: toggle.id, class: 'toggle' }, toggle, ' ' + section.title + ': change codec, size or bitrate (ffmpeg)');
      form.append(h('div', { class: 'optional-toggle' }, lbl));
      optionals.push({ toggle, fs, key: section.optional, was: on });
    }
    const grid = h('div', { class: 'grid' });
    for (const f of section.fields) {
      const field = makeField(f, schemas, values, ctx, id);
      fields.push(field);
      grid.append(field.wrap);
    }
    fs.append(grid);
    form.append(fs);
    if (toggle) toggle.addEventListener('change', () => refresh());
  }
  const submit = h('button', { type: 'submit', class: 'primary' }, submitLabel || 'Save');
  const actions = h('div', { class: 'actions' }, formError, submit);
  if (onCancel) actions.append(h('button', { type: 'button', class: 'secondary', onclick: onCancel }, 'Cancel'));
  form.append(actions);

  const byKey = new Map(fields.map((f) => [f.key, f]));
  function valueOf(key) { const f = byKey.get(key); return f ? f.input.value : undefined; }

  function refresh() {
    for (const o of optionals) {
      o.fs.hidden = !o.toggle.checked;
      o.fs.disabled = !o.toggle.checked;
    }
    for (const f of fields) {
      if (f.when) {
        const show = f.when.includes(valueOf(f.whenKey));
        f.wrap.hidden = !show;
        f.input.disabled = !show;
      }
      if (f.update) f.update(valueOf);
    }
  }
  form.addEventListener('change', () => refresh());
  refresh();

  function clearErrors() {
    formError.hidden = true;
    for (const f of fields) f.setError('');
  }

  function showError(err) {
    clearErrors();
    let target = err.field ? byKey.get(err.field) : null;
    if (!target && err.field) {
      // A field the form shows under a longer path (input.input_stream_listen_port → .port).
      target = fields.find((f) => !f.wrap.hidden && f.key.startsWith(err.field + '.'));
    }
    if (target && !target.wrap.hidden) {
      target.setError(err.message);
      target.input.focus();
    } else {
      formError.textContent = (err.code ? err.code + ': ' : '') + err.message + (err.field ? ' (' + err.field + ')' : '');
      formError.hidden = false;
    }
  }

  function collect() {
    const body = {};
    // An optional section ticked off on an edit is sent empty, which replaces (clears) it;
    // left out, the API would keep the stored one.
    for (const o of optionals) if (o.was && !o.toggle.checked) body[o.key] = {};
    for (const f of fields) {
      // :disabled also covers the fields of a disabled fieldset (an optional section left off).
      if (f.wrap.hidden || f.input.matches(':disabled')) continue;
      const v = f.read();
      if (v === undefined) continue;
      set(body, f.key, v);
    }
    return body;
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearErrors();
    submit.disabled = true;
    try {
      await onSubmit(collect());
    } catch (err) {
      showError(err);
    } finally {
      submit.disabled = false;
    }
  });

  return { el: form, showError, collect };
}

function makeField(f, schemas, values, ctx, formID) {
  const { s, required: schemaRequired } = f.schema ? resolve(schemas, f.schema) : { s: {}, required: false };
  const required = f.required || schemaRequired;
  const fid = formID + '-' + f.key.replace(/\./g, '-');
  const t = types(s);
  const enumValues = f.enum || s.enum;
  let input;
  let kind = 'text';
  if (f.widget === 'server') {
    input = h('select', { id: fid, name: f.key });
    kind = 'server';
  } else if (enumValues && !f.text) {
    input = h('select', { id: fid, name: f.key });
    if (!required && !enumValues.includes('')) input.append(h('option', { value: '' }, '(default)'));
    for (const v of enumValues) {
      const label = ENUM_LABELS[v];
      input.append(h('option', { value: String(v) }, label === undefined ? String(v) : v === '' ? label : label + ' · ' + v));
    }
    kind = enumValues.every((v) => typeof v === 'number') ? 'int' : 'enum';
  } else if (!f.text && (t.includes('integer') || t.includes('number'))) {
    kind = t.includes('integer') ? 'int' : 'number';
    input = h('input', { id: fid, name: f.key, type: 'number', inputmode: kind === 'int' ? 'numeric' : 'decimal',
      step: kind === 'int' ? 1 : 'any', min: s.minimum, max: s.maximum });
  } else if (t.includes('boolean')) {
    input = h('input', { id: fid, name: f.key, type: 'checkbox' });
    kind = 'bool';
  } else {
    input = h('input', { id: fid, name: f.key, type: f.widget === 'password' ? 'password' : 'text',
      minlength: s.minLength || undefined, maxlength: s.maxLength || undefined, autocomplete: 'off', spellcheck: 'false' });
    if (f.widget === 'password') input.setAttribute('autocomplete', 'new-password');
  }
  if (required) input.required = true;
  if (f.placeholder) input.placeholder = f.placeholder;

  const initial = values ? get(values, f.key) : undefined;
  const v = initial !== undefined && initial !== null ? initial : f.value;
  if (kind === 'bool') input.checked = v === undefined ? !!s.default : !!v;
  else if (v !== undefined && kind !== 'server') input.value = String(v);

  const help = f.help ? h('p', { class: 'help', id: fid + '-help' }, f.help) : null;
  const err = h('p', { class: 'field-error', id: fid + '-err', hidden: true });
  input.setAttribute('aria-describedby', [help && help.id, err.id].filter(Boolean).join(' '));
  // A clearable write-only password that is set (reads say <key>_set): left empty an edit keeps
  // it, so removing it takes a box of its own, which sends "".
  let clear = null;
  if (f.clearable && values && get(values, f.key + '_set') === true) {
    clear = h('input', { type: 'checkbox', id: fid + '-clear', name: f.key + '_clear' });
    clear.addEventListener('change', () => {
      if (clear.checked) input.value = '';
      input.readOnly = clear.checked;
    });
  }
  const clearLabel = clear ? h('label', { for: clear.id, class: 'toggle' }, clear, ' Remove the password') : null;
  const wrap = h('div', { class: 'field' + (kind === 'bool' ? ' check' : ''), dataset: { field: f.key } },
    h('label', { for: fid }, f.label + (required ? ' *' : '')), input, clearLabel, help, err);

  const field = {
    key: f.key, wrap, input,
    when: f.when, whenKey: f.whenKey || (f.when ? f.key.split('.')[0] + '.input_type' : null),
    setError(msg) {
      err.textContent = msg;
      err.hidden = !msg;
      if (msg) input.setAttribute('aria-invalid', 'true'); else input.removeAttribute('aria-invalid');
    },
    read() {
      if (clear && clear.checked) return '';
      if (kind === 'bool') return input.checked;
      const raw = input.value.trim();
      if (raw === '') return undefined;
      if (kind === 'int' || kind === 'number') return Number(raw);
      return raw;
    },
  };
  if (f.follows === 'transport') {
    let last = null;
    field.update = (valueOf) => {
      const type = valueOf(field.whenKey);
      if (type !== last) {
        last = type;
        if (!values || get(values, f.key) === undefined) input.value = LISTEN_TRANSPORT[type] || 'TCP';
      }
    };
  }
  if (f.placeholderBy) {
    field.update = (valueOf) => { input.placeholder = f.placeholderBy[valueOf(field.whenKey)] || ''; };
  }
  if (kind === 'server') {
    let last = null;
    field.update = (valueOf) => {
      const type = valueOf(field.whenKey) || '';
      if (type === last) return;
      last = type;
      const proto = type.includes('SRT') ? 'srt' : 'rtmp';
      const list = ((ctx && ctx.servers) || []).filter((sv) => sv.kind === proto);
      fill(input, list.length
        ? list.map((sv) => h('option', { value: sv.id }, sv.name + ' (port ' + sv.port + ')'))
        : h('option', { value: '' }, 'no ' + proto.toUpperCase() + ' server module: create one first'));
      if (initial) input.value = initial;
    };
  }
  return field;
}
