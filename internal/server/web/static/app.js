// app.js: the panel's entry point: the session list, routing (by the URL
// fragment: #/ , #/s/ID, #/settings), the new-session form, and the
// signed-out screen.

import { h, clear, $ } from './dom.js';
import { get, post, put, enc, setSignedOutHandler } from './api.js';
import { SessionView } from './session.js';
import { renderSettings } from './settings.js';
import * as fmt from './format.js';

const LIST_POLL_MS = 5000;

const state = {
  sessions: [],
  models: [],
  settings: null,
  view: null,
  query: '',
  approvals: 0,
  title: 'mx-claw',
};

let slideTimer = 0;

const app = {
  models: () => state.models,
  settings: () => state.settings,
  mode: () => (state.settings && state.settings.permissions && state.settings.permissions.defaultMode) || 'default',
  async setMode(mode) {
    state.settings = await put('/api/settings', { permissions: { defaultMode: mode } });
  },
  async reloadSettings() {
    state.settings = await get('/api/settings');
    return state.settings;
  },
  onTitle(session) {
    state.title = (session.title || 'Untitled session') + ' — mx-claw';
    updateTitle();
    const listed = state.sessions.find((s) => s.id === session.id);
    if (!listed || listed.title !== session.title || listed.status !== session.status) refreshList();
    else markActive();
  },
  onApprovals(n) {
    state.approvals = n;
    updateTitle();
  },
  toggleSidebar(open) {
    const b = document.body.classList;
    const want = open === undefined ? !b.contains('sidebar-open') : open;
    if (want === b.contains('sidebar-open')) return;
    b.add('sliding');
    b.toggle('sidebar-open', want);
    clearTimeout(slideTimer);
    slideTimer = setTimeout(() => b.remove('sliding'), 250);
  },
  signedOut,
  refreshList,
};

function updateTitle() {
  document.title = (state.approvals ? '(!) Approval needed — ' : '') + state.title;
}

// ---- sidebar ----

const sidebar = {
  list: null,
  search: null,
};

function buildSidebar() {
  const root = $('#sidebar');
  clear(root);
  sidebar.search = h('input', { type: 'search', class: 'search', placeholder: 'Search title or workspace', 'aria-label': 'Search sessions' });
  let t = 0;
  sidebar.search.addEventListener('input', () => {
    clearTimeout(t);
    t = setTimeout(() => {
      state.query = sidebar.search.value.trim();
      refreshList();
    }, 200);
  });
  sidebar.list = h('nav', { class: 'session-list', 'aria-label': 'Sessions' });
  root.append(
    h('div', { class: 'brand' }, h('span', { class: 'logo', 'aria-hidden': 'true' }, '◆'), 'mx-claw'),
    h('a', { class: 'btn primary new', href: '#/', onclick: () => app.toggleSidebar(false) }, '+ New session'),
    sidebar.search,
    sidebar.list,
    h('a', { class: 'settings-link', href: '#/settings', onclick: () => app.toggleSidebar(false) }, 'Settings'),
  );
}

async function refreshList() {
  try {
    const q = state.query ? '?q=' + enc(state.query) : '';
    const d = await get('/api/sessions' + q);
    state.sessions = d.sessions || [];
    renderList();
  } catch {
    /* shown by the views; the next poll tries again */
  }
}

function renderList() {
  clear(sidebar.list);
  if (!state.sessions.length) {
    sidebar.list.appendChild(h('p', { class: 'empty' }, state.query ? 'No session matches.' : 'No sessions yet.'));
  }
  for (const s of state.sessions) {
    const item = h(
      'a',
      { class: 'session-item', href: '#/s/' + enc(s.id), dataset: { id: s.id, status: s.status }, onclick: () => app.toggleSidebar(false) },
      h('span', { class: 'dot', 'aria-hidden': 'true' }),
      h('span', { class: 'item-main' }, h('span', { class: 'item-title' }, s.title || 'Untitled session'), h('span', { class: 'item-sub' }, fmt.base(s.workspace) + ' · ' + fmt.ago(s.updatedAt))),
      s.status === 'waiting_for_approval' ? h('span', { class: 'needs' }, 'approval') : null,
    );
    item.title = s.workspace;
    sidebar.list.appendChild(item);
  }
  markActive();
}

function markActive() {
  const id = state.view && state.view.id;
  for (const a of sidebar.list ? sidebar.list.children : []) {
    a.classList.toggle('active', !!id && a.dataset.id === id);
    if (a.dataset.id === id) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

// ---- views ----

function closeView() {
  if (state.view && state.view.destroy) state.view.destroy();
  state.view = null;
  state.approvals = 0;
}

function route() {
  const main = $('#view');
  const hash = location.hash || '#/';
  closeView();
  app.toggleSidebar(false);
  let m;
  if ((m = /^#\/s\/([^/]+)$/.exec(hash))) {
    const v = new SessionView(main, decodeURIComponent(m[1]), app);
    state.view = v;
    v.start();
  } else if (hash === '#/settings') {
    state.title = 'Settings — mx-claw';
    updateTitle();
    renderSettingsView(main);
  } else {
    state.title = 'mx-claw';
    updateTitle();
    renderHome(main);
  }
  markActive();
}

async function renderSettingsView(main) {
  clear(main);
  try {
    const s = await app.reloadSettings();
    if (location.hash !== '#/settings') return;
    renderSettings(main, s, app);
  } catch (e) {
    main.appendChild(h('div', { class: 'block notice error', role: 'alert' }, 'Cannot load the settings: ' + e.message));
  }
}

// renderHome shows the new-session form.
function renderHome(main) {
  clear(main);
  const recent = [...new Set(state.sessions.map((s) => s.workspace).filter(Boolean))];
  const ws = h('input', { type: 'text', name: 'workspace', required: true, list: 'workspaces', spellcheck: 'false', autocomplete: 'off', placeholder: '/path/to/project', value: recent[0] || '' });
  const dl = h('datalist', { id: 'workspaces' }, recent.map((w) => h('option', { value: w })));
  const model = h(
    'select',
    { name: 'model' },
    h('option', { value: '' }, 'default model'),
    state.models.map((m) => h('option', { value: m.id, disabled: m.ready === false, title: m.problem || null }, m.id + (m.ready === false ? ' (not ready)' : ''))),
  );
  const status = h('div', { class: 'form-status', role: 'status' });
  const form = h(
    'form',
    { class: 'card new-session' },
    h('h2', null, 'New session'),
    h('label', { class: 'field' }, h('span', null, 'Workspace (a folder on this machine)'), ws, dl),
    h('label', { class: 'field' }, h('span', null, 'Model'), model),
    h('button', { type: 'submit', class: 'btn primary' }, 'Start session'),
    status,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    status.textContent = 'Creating…';
    status.classList.remove('error');
    const body = { workspace: ws.value.trim() };
    if (model.value) body.model = model.value;
    try {
      const s = await post('/api/sessions', body);
      const sess = s.session || s;
      await refreshList();
      location.hash = '#/s/' + enc(sess.id);
    } catch (err) {
      status.textContent = err.message;
      status.classList.add('error');
    }
  });
  main.append(
    h(
      'header',
      { class: 'chat-head' },
      h('button', { type: 'button', class: 'menu icon-btn', 'aria-label': 'Sessions', onclick: () => app.toggleSidebar() }, '☰'),
      h('div', { class: 'head-main' }, h('div', { class: 'title-row' }, h('h1', { class: 'session-title' }, 'mx-claw'))),
    ),
    h('main', { class: 'scroller home' }, h('div', { class: 'home-inner' }, form, h('p', { class: 'help' }, 'Pick a session on the left to continue it, or start a new one in a workspace.'))),
  );
}

// ---- sign-in ----

let signedOutShown = false;

function signedOut() {
  if (signedOutShown) return;
  signedOutShown = true;
  closeView();
  document.body.classList.add('signed-out');
  const main = $('#view');
  clear(main);
  main.appendChild(
    h(
      'div',
      { class: 'card signed-out-card', role: 'alert' },
      h('h2', null, 'Not signed in'),
      h('p', null, 'Open the login URL that `mx-claw serve` printed when it started. It is also in server.json in the mx-claw home directory. The panel keeps no password; the login sets a cookie for this server only.'),
      h('button', { type: 'button', class: 'btn', onclick: () => location.reload() }, 'Try again'),
    ),
  );
}

// ---- start ----

async function main() {
  setSignedOutHandler(signedOut);
  buildSidebar();
  $('#scrim').addEventListener('click', () => app.toggleSidebar(false));
  document.addEventListener('keydown', (e) => {
    // Esc cancels the running turn from anywhere in the chat view, but
    // not while an input method composes or inside the approval dock,
    // a form field or a menu.
    if (e.key !== 'Escape' || e.isComposing || e.defaultPrevented) return;
    if (document.body.classList.contains('sidebar-open')) {
      app.toggleSidebar(false);
      return;
    }
    const t = e.target;
    if (t && t.closest && t.closest('.dock, input, select, form.card')) return;
    if (state.view && state.view.cancel) state.view.cancel();
  });
  try {
    const [models, settings] = await Promise.allSettled([get('/api/models'), get('/api/settings')]);
    if (models.status === 'fulfilled') state.models = (models.value && models.value.models) || [];
    if (settings.status === 'fulfilled') state.settings = settings.value;
  } catch {
    /* signed out or down: the views say so */
  }
  if (signedOutShown) return;
  await refreshList();
  window.addEventListener('hashchange', route);
  route();
  setInterval(() => {
    if (!document.hidden && !signedOutShown) refreshList();
  }, LIST_POLL_MS);
}

main();
