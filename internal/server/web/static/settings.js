// settings.js: the settings page: permission mode and rules, and the
// providers with whether each has a key. A key can be set here; it is
// never shown, and the server never sends one back.

import { h, clear } from './dom.js';
import { put } from './api.js';

const MODES = [
  ['default', 'Reads are allowed; edits and commands ask (read-only commands do not).'],
  ['acceptEdits', 'Edits inside the workspace are allowed; commands ask.'],
  ['plan', 'Read-only: edits and commands are refused with guidance.'],
  ['bypass', 'Everything is allowed, except deny rules, catastrophic commands and hard checks.'],
];

// renderSettings fills root with the settings page for settings s (GET
// /api/settings); app gives reloadSettings() and toggleSidebar().
export function renderSettings(root, s, app) {
  clear(root);
  // Each part says how its last change went, next to it.
  const statusLine = () => h('div', { class: 'form-status', role: 'status' });
  const sayIn = (el, msg, err) => {
    el.textContent = msg;
    el.classList.toggle('error', !!err);
  };
  const modeStatus = statusLine();
  const say = (msg, err) => sayIn(modeStatus, msg, err);

  // Permission mode.
  const modeField = h('fieldset', { class: 'card' }, h('legend', null, 'Permission mode'));
  const perms = s.permissions || {};
  for (const [m, help] of MODES) {
    const input = h('input', { type: 'radio', name: 'mode', value: m, checked: (perms.defaultMode || 'default') === m });
    input.addEventListener('change', async () => {
      try {
        await put('/api/settings', { permissions: { defaultMode: m } });
        say('Permission mode set to ' + m + '.');
        await app.reloadSettings();
      } catch (e) {
        say('Not saved: ' + e.message, true);
      }
    });
    modeField.appendChild(h('label', { class: 'radio' }, input, h('span', null, h('strong', null, m), ' — ', help)));
  }
  modeField.appendChild(modeStatus);

  // Rules: one per line, e.g. run_command(go test:*).
  const areas = {};
  const rulesForm = h('form', { class: 'card rules' }, h('h2', null, 'Permission rules'), h('p', { class: 'help' }, 'One rule per line: a tool, or a tool with a pattern, e.g. run_command(go test:*) or edit_file(src/**). Deny beats ask beats allow.'));
  for (const kind of ['allow', 'ask', 'deny']) {
    areas[kind] = h('textarea', { name: kind, rows: '4', spellcheck: 'false', 'aria-label': kind + ' rules' });
    areas[kind].value = (perms[kind] || []).join('\n');
    rulesForm.appendChild(h('label', { class: 'field' }, h('span', null, kind), areas[kind]));
  }
  if (perms.file) rulesForm.appendChild(h('p', { class: 'help mono small' }, 'Saved in ' + perms.file));
  const rulesStatus = statusLine();
  rulesForm.appendChild(h('button', { type: 'submit', class: 'btn primary' }, 'Save rules'));
  rulesForm.appendChild(rulesStatus);
  rulesForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = { permissions: {} };
    for (const kind of ['allow', 'ask', 'deny']) {
      body.permissions[kind] = areas[kind].value
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean);
    }
    try {
      await put('/api/settings', body);
      sayIn(rulesStatus, 'Rules saved.');
      await app.reloadSettings();
    } catch (err) {
      sayIn(rulesStatus, 'Rules not saved: ' + err.message, true);
    }
  });

  // Providers.
  const provs = h('div', { class: 'card providers' }, h('h2', null, 'Providers'));
  const list = s.providers || [];
  if (s.defaultModel) provs.appendChild(h('p', { class: 'help' }, 'Default model: ', h('span', { class: 'mono' }, s.defaultModel)));
  if (!list.length) provs.appendChild(h('p', { class: 'help' }, 'No providers are configured. Run `mx-claw model configure` in a terminal.'));
  // providerBlock shows one provider; after a key is saved it is
  // replaced by a fresh one, in place.
  const providerBlock = (p, said) => {
    const has = !!p.keyConfigured;
    const needs = !!p.requiresApiKey;
    const keyState = !needs ? 'no key needed' : has ? 'key configured' + (p.keySource ? ' (' + p.keySource + ')' : '') : 'no key';
    const key = h('input', { type: 'password', autocomplete: 'off', spellcheck: 'false', placeholder: has ? 'Replace the key' : 'Paste an API key', 'aria-label': 'API key for ' + p.name });
    const form = h('form', { class: 'key-form' }, key, h('button', { type: 'submit', class: 'btn' }, 'Set key'));
    const keyStatus = statusLine();
    if (said) sayIn(keyStatus, said);
    const block = h(
      'div',
      { class: 'provider', dataset: { provider: p.name } },
      h(
        'div',
        { class: 'provider-head' },
        h('strong', null, p.name),
        p.name === s.activeProvider ? h('span', { class: 'tag' }, 'active') : null,
        h('span', { class: 'key-state ' + (has || !needs ? 'ok' : 'missing') }, keyState),
        p.ready === false ? h('span', { class: 'key-state missing', title: p.problem || null }, 'not ready') : null,
      ),
      p.problem ? h('div', { class: 'small' }, p.problem) : null,
      p.baseURL ? h('div', { class: 'mono small' }, p.baseURL) : null,
      (p.models || []).length ? h('div', { class: 'small' }, 'Models: ' + p.models.join(', ')) : null,
      needs ? form : null,
      keyStatus,
    );
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const v = key.value;
      key.value = ''; // the page keeps no copy, whatever happens next
      if (!v.trim()) return;
      try {
        let fresh = await put('/api/settings', { apiKeys: { [p.name]: v } });
        if (!fresh || !fresh.providers) fresh = await app.reloadSettings();
        const np = (fresh.providers || []).find((x) => x.name === p.name) || p;
        block.replaceWith(providerBlock(np, 'Key for ' + p.name + ' saved. It is not shown again.'));
      } catch (err) {
        sayIn(keyStatus, 'Key not saved: ' + err.message, true);
      }
    });
    return block;
  };
  for (const p of list) provs.appendChild(providerBlock(p));

  root.append(
    h(
      'header',
      { class: 'chat-head' },
      h('button', { type: 'button', class: 'menu icon-btn', 'aria-label': 'Sessions', onclick: () => app.toggleSidebar() }, '☰'),
      h('div', { class: 'head-main' }, h('div', { class: 'title-row' }, h('h1', { class: 'session-title' }, 'Settings'))),
    ),
    h('main', { class: 'scroller settings' }, h('div', { class: 'settings-inner' }, modeField, rulesForm, provs)),
  );
}
