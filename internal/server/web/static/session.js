// session.js: the chat view of one session: header (status, connection,
// model, permission mode, meter), the transcript, the approval dock, the
// queued messages and the composer.

import { h, clear } from './dom.js';
import { get, post, put, del, enc } from './api.js';
import { Transcript } from './transcript.js';
import { EventStream, LIVE, RECONNECTING, CONNECTING, SIGNED_OUT, GONE } from './stream.js';
import { ApprovalDock, fromEvent, fromApproval } from './approvals.js';
import { bindComposer, grow } from './composer.js';
import { Attachments } from './attachments.js';
import * as fmt from './format.js';

// Events applied per slice of work before the page gets a turn to paint
// and handle input; a long replay never freezes it.
const SLICE_MS = 12;
// A reader more than this far above the bottom is reading: new output
// does not move the view.
const STICK_PX = 48;

const STATUS_LABEL = {
  idle: 'idle',
  running: 'running',
  waiting_for_approval: 'needs approval',
  failed: 'failed',
  cancelled: 'cancelled',
};

// NARROW matches a phone-sized screen (style.css uses the same width).
const NARROW = '(max-width: 760px)';

// placeholder is the composer's hint: short on a narrow screen.
function placeholder() {
  return matchMedia(NARROW).matches ? 'Message the agent' : 'Message the agent — Enter sends, Shift+Enter for a new line, Esc cancels';
}

export class SessionView {
  // app gives models(), settings(), setMode(mode), onTitle(), and
  // refreshList().
  constructor(root, id, app) {
    this.root = root;
    this.id = id;
    this.app = app;
    this.session = null;
    this.status = 'idle';
    this.statusSeq = 0; // sequence of the last session.updated applied
    this.conn = CONNECTING;
    this.usage = { tokens: 0, input: 0, output: 0, cost: null, context: 0 };
    this.queue = new Map(); // key -> {id, text}
    this.queueSeq = 0;
    // queueMark counts the queue events applied: a list read from the
    // server while one was applied is older than what the page shows.
    this.queueMark = 0;
    // liveFrom is the sequence the first replay ended at (stream.ready):
    // events after it happened while the page was open.
    this.liveFrom = null;
    this.events = [];
    this.pumping = false;
    this.stick = true;
    this.unseen = false;
    this.destroyed = false;
    this.build();
  }

  build() {
    clear(this.root);
    this.titleEl = h('h1', { class: 'session-title' }, '…');
    this.wsEl = h('div', { class: 'workspace' });
    this.statusEl = h('span', { class: 'status', role: 'status' });
    this.connEl = h('span', { class: 'conn', title: 'Event stream' });
    this.modelSel = h('select', { class: 'model', 'aria-label': 'Model' });
    this.modelSel.addEventListener('change', () => this.switchModel());
    this.modeSel = h('select', { class: 'mode', 'aria-label': 'Permission mode' });
    for (const m of ['default', 'acceptEdits', 'plan', 'bypass']) this.modeSel.appendChild(h('option', { value: m }, m));
    this.modeSel.addEventListener('change', () => this.switchMode());
    this.meterEl = h('div', { class: 'meter', title: 'Tokens, cost and context used' });
    this.meterBar = h('span', { class: 'bar' });
    this.meterText = h('span', { class: 'meter-text' });
    this.meterEl.append(h('span', { class: 'track' }, this.meterBar), this.meterText);
    this.banner = h('div', { class: 'conn-banner', hidden: true, role: 'status' });

    // One flat row of parts that wraps: title, status and meter on the
    // first line, the workspace and the controls on the second; a narrow
    // screen moves the meter down beside the controls (style.css).
    const header = h(
      'header',
      { class: 'chat-head session-head' },
      h('button', { type: 'button', class: 'menu icon-btn', 'aria-label': 'Sessions', onclick: () => this.app.toggleSidebar() }, '☰'),
      h('div', { class: 'title-row' }, this.titleEl, this.statusEl, this.connEl),
      this.meterEl,
      h('span', { class: 'break' }),
      this.wsEl,
      h('label', { class: 'ctl' }, h('span', null, 'Model'), this.modelSel),
      h('label', { class: 'ctl' }, h('span', null, 'Mode'), this.modeSel),
    );

    this.log = h('div', { class: 'log', role: 'log', 'aria-live': 'off' });
    this.scroller = h('main', { class: 'scroller', tabindex: '-1' }, this.log);
    // Follow new output only while the reader is at the bottom. Only a
    // scroll the reader made (wheel, touch, keys, the scrollbar) can stop
    // that; a scroll caused by layout (a resize, the dock opening) must
    // not, or the view would stop following on its own.
    this.userScrollAt = -1e9;
    const byUser = () => (this.userScrollAt = performance.now());
    for (const ev of ['wheel', 'touchmove', 'pointerdown']) this.scroller.addEventListener(ev, byUser, { passive: true });
    this.scroller.addEventListener('keydown', (e) => {
      if (['PageUp', 'PageDown', 'ArrowUp', 'ArrowDown', 'Home', 'End', ' '].includes(e.key)) byUser();
    });
    this.scroller.addEventListener('scroll', () => {
      const d = this.scroller.scrollHeight - this.scroller.scrollTop - this.scroller.clientHeight;
      if (d < STICK_PX) {
        this.stick = true;
        this.setUnseen(false);
      } else if (performance.now() - this.userScrollAt < 1000) {
        this.stick = false;
      } else if (this.stick) {
        this.toBottom();
      }
    });
    this.jump = h('button', { type: 'button', class: 'jump', hidden: true }, '↓ New activity');
    this.jump.addEventListener('click', () => {
      this.stick = true;
      this.toBottom();
      this.setUnseen(false);
    });
    const ro = new ResizeObserver(() => this.follow());
    ro.observe(this.log);
    ro.observe(this.scroller);

    this.dockEl = h('div', { class: 'dock', hidden: true });
    this.dock = new ApprovalDock(this.dockEl, {
      answer: (item, body) => post('/api/sessions/' + enc(this.id) + '/approvals/' + enc(item.id), body),
      onChange: (n) => this.onApprovals(n),
    });
    this.queueEl = h('div', { class: 'queue', hidden: true });

    this.input = h('textarea', {
      class: 'input',
      rows: '1',
      placeholder: placeholder(),
      'aria-label': 'Message',
      enterkeyhint: 'send',
    });
    this.sendBtn = h('button', { type: 'submit', class: 'btn primary send' }, 'Send');
    this.cancelBtn = h('button', { type: 'button', class: 'btn danger cancel', hidden: true }, 'Stop');
    this.cancelBtn.addEventListener('click', () => this.cancel());
    this.hint = h('div', { class: 'hint' });
    this.attach = new Attachments({ onError: (msg) => this.flashHint(msg) });
    this.attach.bindPaste(this.input);
    const form = h('form', { class: 'composer' }, this.input, h('div', { class: 'composer-buttons' }, this.attach.button, this.attach.picker, this.cancelBtn, this.sendBtn));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.send();
    });
    this.composer = bindComposer(this.input, { onSend: () => this.send(), onCancel: () => this.cancel() });
    this.narrow = matchMedia(NARROW);
    this.onNarrow = () => (this.input.placeholder = placeholder());
    this.narrow.addEventListener('change', this.onNarrow);

    this.root.append(
      header,
      this.banner,
      h('div', { class: 'chat-body' }, this.scroller, this.jump),
      h('div', { class: 'bottom' }, this.dockEl, this.queueEl, this.hint, this.attach.el, form),
    );

    this.transcript = new Transcript(this.log, {
      onChange: () => this.grew(),
      onStatus: (s, ev) => {
        this.statusSeq = Math.max(this.statusSeq, ev.sequence || 0);
        this.setStatus(s);
      },
      onUsage: (ev) => this.onUsage(ev),
      sessionId: this.id,
      onApproval: (kind, ev) => {
        // A subagent's request carries its own session's sequence: it
        // counts as newer than anything applied so far.
        const seq = ev.sessionId === this.id ? ev.sequence || 0 : this.transcript.lastSeq + 0.5;
        if (kind === 'requested') this.dock.add({ ...fromEvent(ev), seq });
        else this.dock.resolved(ev.requestId);
      },
      onQueue: (kind, ev) => this.onQueueEvent(kind, ev),
      onTurn: (kind, ev) => this.onTurn(kind, ev),
      onStream: (kind, ev) => this.onStream(kind, ev),
    });
  }

  async start() {
    this.renderControls();
    try {
      await this.refresh();
    } catch (e) {
      this.transcript.add(h('div', { class: 'block notice error', role: 'alert' }, h('strong', null, 'Cannot open the session. '), e.message));
      return;
    }
    this.stream = new EventStream('/api/sessions/' + enc(this.id) + '/events', {
      after: 0,
      onEvent: (ev) => this.enqueue(ev),
      onState: (s, info) => this.setConn(s, info),
    }).start();
    this.input.focus();
  }

  destroy() {
    this.destroyed = true;
    this.narrow.removeEventListener('change', this.onNarrow);
    if (this.stream) this.stream.stop();
    clearTimeout(this.refreshTimer);
    clearTimeout(this.queueTimer);
  }

  // refresh reads the session record, its pending approvals and queued
  // messages: the state that matters after a reconnect.
  async refresh() {
    // An answer may be older than events that arrived while it was on
    // its way; what those events said wins.
    const since = this.transcript.lastSeq;
    const mark = this.queueMark;
    const [d, q] = await Promise.all([get('/api/sessions/' + enc(this.id)), this.fetchQueue()]);
    if (this.destroyed) return;
    this.setSession(d.session, this.statusSeq > since);
    this.dock.set((d.pendingApprovals || []).map((a) => fromApproval(a, this.id)), since);
    if (q && mark === this.queueMark) this.setQueue(q);
  }

  setSession(s, keepStatus = false) {
    this.session = s;
    this.titleEl.textContent = s.title || 'Untitled session';
    this.wsEl.textContent = s.workspace;
    this.wsEl.title = s.workspace;
    if (!keepStatus) this.setStatus(s.status);
    this.setModel(s.model);
    this.app.onTitle(s);
  }

  // fetchQueue returns the queued messages, or null if the server cannot
  // say.
  async fetchQueue() {
    try {
      const d = await get('/api/sessions/' + enc(this.id) + '/queued');
      return d.queued || [];
    } catch {
      return null;
    }
  }

  // refreshSoon refreshes once a burst of events is over.
  refreshSoon() {
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => this.refresh().catch(() => {}), 300);
  }

  // ---- events ----

  enqueue(ev) {
    this.events.push(ev);
    if (!this.pumping) {
      this.pumping = true;
      setTimeout(() => this.pump(), 0);
    }
  }

  // pump applies queued events a slice at a time.
  pump() {
    const t0 = performance.now();
    while (this.events.length && performance.now() - t0 < SLICE_MS) {
      const ev = this.events.shift();
      try {
        this.transcript.apply(ev);
      } catch (e) {
        console.error('event', ev, e);
      }
    }
    if (this.events.length && !this.destroyed) {
      setTimeout(() => this.pump(), 0);
    } else {
      this.pumping = false;
    }
  }

  setStatus(s) {
    if (!s) return;
    const changed = s !== this.status;
    this.status = s;
    this.renderStatus();
    if (changed) this.refreshSoon();
  }

  renderStatus() {
    const busy = this.status === 'running' || this.status === 'waiting_for_approval';
    const stale = busy && this.conn !== LIVE;
    this.statusEl.textContent = (STATUS_LABEL[this.status] || this.status) + (stale ? ' (not live)' : '');
    this.statusEl.dataset.status = this.status;
    this.statusEl.classList.toggle('stale', stale);
    this.cancelBtn.hidden = !busy;
    this.hint.textContent = busy ? 'Busy: a message sent now waits until this turn ends.' : '';
    this.root.dataset.status = this.status;
  }

  setConn(s, info) {
    this.conn = s;
    const labels = {
      [CONNECTING]: 'connecting…',
      [LIVE]: 'live',
      [RECONNECTING]: 'reconnecting…',
      [SIGNED_OUT]: 'signed out',
      [GONE]: 'no such session',
    };
    this.connEl.textContent = labels[s] || s;
    this.connEl.dataset.state = s;
    let msg = '';
    if (s === RECONNECTING) {
      const wait = info.delay ? ' Next try in ' + Math.ceil(info.delay / 1000) + ' s.' : '';
      msg = 'Connection to the server lost' + (info.error ? ' (' + info.error + ')' : '') + '; reconnecting. What you see may be behind.' + wait;
    } else if (s === GONE) {
      msg = 'This session does not exist on this server.';
    } else if (s === SIGNED_OUT) {
      this.app.signedOut();
    }
    if (s !== LIVE || !this.closing) {
      this.banner.textContent = msg;
      this.banner.hidden = !msg;
    }
    this.renderStatus();
  }

  onStream(kind, ev) {
    if (kind === 'ready') {
      // The replay is over: what was missed while away (a status, an
      // approval answered elsewhere, a queue taken) is read again.
      if (this.liveFrom === null) this.liveFrom = ev.sequence || 0;
      this.closing = false;
      this.banner.hidden = true;
      if (ev.session) this.setSession(ev.session);
      this.refresh().catch(() => {});
    } else if (kind === 'closing') {
      this.closing = true;
      this.banner.textContent = 'The server is shutting down' + (ev.text ? ' (' + ev.text + ')' : '') + '. The panel reconnects when it is back.';
      this.banner.hidden = false;
    }
  }

  onUsage(ev) {
    if (ev.type === 'usage') {
      const u = ev.usage || {};
      this.usage.input += u.inputTokens || 0;
      this.usage.output += u.outputTokens || 0;
      if (typeof ev.costUsd === 'number') this.usage.cost = (this.usage.cost || 0) + ev.costUsd;
    }
    if (ev.contextPercent) this.usage.context = ev.contextPercent;
    this.renderMeter();
  }

  renderMeter() {
    const u = this.usage;
    const parts = ['ctx ' + fmt.percent(u.context), fmt.tokens(u.input + u.output) + ' tok'];
    if (u.cost !== null) parts.push(fmt.cost(u.cost));
    this.meterText.textContent = parts.join(' · ');
    this.meterEl.title = 'Context window used by the last request: ' + fmt.percent(u.context) + '\nTokens: ' + u.input + ' in, ' + u.output + ' out' + (u.cost !== null ? '\nEstimated cost: ' + fmt.cost(u.cost) : '\nCost unknown for this model');
    this.meterBar.style.width = Math.min(100, u.context) + '%';
    this.meterEl.classList.toggle('high', u.context >= 80);
  }

  onTurn(kind, ev) {
    if (kind === 'started') {
      if (ev.model) this.setModel(ev.model);
      // The queued messages were taken for this turn.
      this.refreshQueue();
    } else {
      this.refreshSoon();
    }
  }

  onApprovals(n) {
    this.root.classList.toggle('needs-approval', n > 0);
    this.app.onApprovals(n);
    if (n > 0) this.follow();
  }

  // ---- queued messages ----

  // onQueueEvent follows the queue from its events, which carry the
  // queued messages with their ids: input.queued adds, input.edited
  // changes, input.removed takes out, and input.returned takes out and
  // puts the text back into the input box (the turn they waited for was
  // cancelled or failed). The replay of the session's history is skipped:
  // the list read when it ends is the queue as it is.
  onQueueEvent(kind, ev) {
    if (this.liveFrom === null) return;
    this.queueMark++;
    const list = ev.queued || [];
    if (kind === 'queued' && !list.length) {
      // No ids (an older server): shown at once, the server's list a
      // moment later.
      this.queue.set('local-' + ++this.queueSeq, { id: 0, text: ev.text || '' });
      clearTimeout(this.queueTimer);
      this.queueTimer = setTimeout(() => this.refreshQueue(), 150);
    }
    for (const q of list) {
      const key = String(q.id);
      if (kind === 'queued' || (kind === 'edited' && this.queue.has(key))) this.queue.set(key, { id: q.id, text: q.content });
      else if (kind === 'removed' || kind === 'returned') this.queue.delete(key);
    }
    this.renderQueue();
    if (kind === 'returned' && list.length && (ev.sequence || 0) > this.liveFrom) this.giveBack(list);
  }

  // giveBack puts returned messages into the input box, before what is
  // being typed there.
  giveBack(list) {
    const texts = list.map((q) => q.content);
    if (this.input.value.trim()) texts.push(this.input.value);
    this.input.value = texts.join('\n\n');
    grow(this.input);
    this.input.focus();
    this.flashHint(list.length === 1 ? 'The queued message was not sent; it is back in the input box.' : 'The ' + list.length + ' queued messages were not sent; they are back in the input box.');
  }

  setQueue(list) {
    this.queue.clear();
    for (const q of list) this.queue.set(String(q.id), { id: q.id, text: q.content });
    this.renderQueue();
  }

  async refreshQueue() {
    const mark = this.queueMark;
    const q = await this.fetchQueue();
    if (!q || this.destroyed) return;
    if (mark === this.queueMark) {
      this.setQueue(q);
    } else {
      // The queue changed while the list was on its way: read it again.
      clearTimeout(this.queueTimer);
      this.queueTimer = setTimeout(() => this.refreshQueue(), 150);
    }
  }

  renderQueue() {
    clear(this.queueEl);
    this.queueEl.hidden = this.queue.size === 0;
    if (!this.queue.size) return;
    this.queueEl.appendChild(h('div', { class: 'label' }, 'Queued — sent when the current turn ends'));
    for (const [key, q] of this.queue) {
      const rm = h('button', { type: 'button', class: 'icon-btn remove', 'aria-label': 'Remove queued message', title: 'Remove', disabled: !q.id }, '×');
      rm.addEventListener('click', async () => {
        rm.disabled = true;
        try {
          await del('/api/sessions/' + enc(this.id) + '/queued/' + enc(String(q.id)));
          this.queue.delete(key);
          this.renderQueue();
        } catch (e) {
          rm.disabled = false;
          rm.title = e.message;
          this.flashHint(e.message);
          this.refreshQueue();
        }
      });
      this.queueEl.appendChild(h('div', { class: 'queued', dataset: { input: String(q.id) } }, h('span', { class: 'text' }, q.text), rm));
    }
  }

  // ---- actions ----

  async send() {
    const text = this.input.value;
    if (!text.trim() || this.sending) return;
    this.sending = true;
    this.sendBtn.disabled = true;
    try {
      const body = { text };
      if (this.attach.count) body.images = this.attach.body();
      await post('/api/sessions/' + enc(this.id) + '/messages', body);
      this.attach.clear();
      this.input.value = '';
      grow(this.input);
      this.stick = true;
      this.toBottom();
    } catch (e) {
      this.flashHint('Not sent: ' + e.message);
    } finally {
      this.sending = false;
      this.sendBtn.disabled = false;
    }
  }

  async cancel() {
    if (this.status !== 'running' && this.status !== 'waiting_for_approval') return;
    this.cancelBtn.disabled = true;
    try {
      await post('/api/sessions/' + enc(this.id) + '/cancel', {});
    } catch (e) {
      this.flashHint('Cancel failed: ' + e.message);
    } finally {
      this.cancelBtn.disabled = false;
    }
  }

  flashHint(msg) {
    this.hint.textContent = msg;
    this.hint.classList.add('error');
    clearTimeout(this.hintTimer);
    this.hintTimer = setTimeout(() => {
      this.hint.classList.remove('error');
      this.renderStatus();
    }, 6000);
  }

  renderControls() {
    clear(this.modelSel);
    for (const m of this.app.models()) {
      this.modelSel.appendChild(h('option', { value: m.id, disabled: m.ready === false, title: m.problem || null }, m.id + (m.ready === false ? ' (not ready)' : '')));
    }
    if (this.session) this.setModel(this.session.model);
    this.modeSel.value = this.app.mode();
  }

  setModel(model) {
    if (!model) return;
    if (![...this.modelSel.options].some((o) => o.value === model)) this.modelSel.appendChild(h('option', { value: model }, model));
    this.modelSel.value = model;
    if (this.session) this.session.model = model;
  }

  async switchModel() {
    const model = this.modelSel.value;
    const before = this.session ? this.session.model : '';
    try {
      const d = await put('/api/sessions/' + enc(this.id) + '/model', { model });
      if (this.session) this.session.model = model;
      if (d && d.pending) this.flashHint('The model changes from the next turn.');
    } catch (e) {
      this.flashHint('Model not changed: ' + e.message);
      this.setModel(before);
    }
  }

  async switchMode() {
    const mode = this.modeSel.value;
    try {
      await this.app.setMode(mode);
    } catch (e) {
      this.flashHint('Mode not changed: ' + e.message);
      this.modeSel.value = this.app.mode();
    }
  }

  // ---- scrolling ----

  grew() {
    if (this.stick) this.follow();
    else this.setUnseen(true);
  }

  follow() {
    if (this.stick) this.toBottom();
  }

  toBottom() {
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  setUnseen(v) {
    this.unseen = v;
    this.jump.hidden = !v;
  }
}
