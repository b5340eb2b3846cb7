// approvals.js: the approval dock. A tool call that waits for a person is
// the one thing the panel must never let go unseen (other agents' web UIs
// show it inside a collapsed message, and the agent looks hung), so it is
// shown outside the scrolling transcript, above the composer, with exactly
// what would run: the command, the change as a diff, or the arguments.
//
// The five answers are allow once (the safe default, styled as primary),
// allow for this session, always allow in this project, deny, and deny
// with a message to the model. The buttons ignore clicks for a moment
// after a request appears, so a click aimed at something else cannot
// answer a request nobody has read. Requests are answered oldest first;
// a newer one never replaces the one on screen.

import { h, clear } from './dom.js';
import { diffView } from './transcript.js';

const INERT_MS = 600;

export class ApprovalDock {
  // el is the dock's container; answer(item, body) sends an answer and
  // returns a promise; onChange(count) hears how many are pending.
  constructor(el, { answer, onChange }) {
    this.el = el;
    this.answer = answer;
    this.onChange = onChange || (() => {});
    this.items = []; // oldest first
    this.done = new Set(); // ids answered (here or elsewhere): never shown again
    this.shownId = '';
    this.busy = false;
    this.render();
  }

  add(item) {
    if (this.done.has(item.id)) return;
    const old = this.items.find((x) => x.id === item.id);
    if (old) {
      // The stored approval lacks the reason and the rule a grant would
      // add; the event has them.
      let more = false;
      for (const k of ['reason', 'suggest', 'summary']) {
        if (item[k] && !old[k]) {
          old[k] = item[k];
          more = true;
        }
      }
      if (more) this.render();
      return;
    }
    this.items.push(item);
    this.render();
  }

  // set replaces the pending requests with the server's list, read when
  // the session's events went up to sequence since: a request an event
  // added after that stays, one answered since does not come back, and
  // what the events said about the ones still pending is kept.
  set(list, since = Infinity) {
    const known = new Map(this.items.map((x) => [x.id, x]));
    const items = list
      .filter((x) => !this.done.has(x.id))
      .map((x) => {
        const k = known.get(x.id);
        return k ? { ...x, reason: x.reason || k.reason, suggest: x.suggest || k.suggest, seq: k.seq } : x;
      });
    for (const x of this.items) {
      if (x.seq > since && !items.some((y) => y.id === x.id)) items.push(x);
    }
    this.items = items;
    this.render();
  }

  // resolved drops a request that was answered.
  resolved(id) {
    this.done.add(id);
    this.remove(id);
  }

  remove(id) {
    const before = this.items.length;
    this.items = this.items.filter((x) => x.id !== id);
    if (this.items.length !== before) this.render();
  }

  get count() {
    return this.items.length;
  }

  render() {
    this.onChange(this.items.length);
    const item = this.items[0];
    if (!item) {
      this.shownId = '';
      this.shownSig = '';
      this.el.hidden = true;
      clear(this.el);
      return;
    }
    // Render again only if what is shown would change: a re-render in the
    // middle of typing a denial would lose the text.
    const sig = JSON.stringify([item, this.items.length]);
    if (sig === this.shownSig) return;
    this.shownSig = sig;
    const fresh = item.id !== this.shownId;
    const typed = !fresh && this.message ? this.message.value : '';
    const typing = !fresh && this.denyWith && !this.denyWith.hidden;
    this.shownId = item.id;
    if (fresh) this.inertUntil = Date.now() + INERT_MS;
    this.el.hidden = false;
    clear(this.el);

    const status = h('div', { class: 'approval-status', role: 'status' });
    const buttons = [];
    const btn = (label, cls, body) => {
      const b = h('button', { type: 'button', class: 'btn ' + cls, dataset: { answer: label } }, label);
      b.addEventListener('click', () => this.send(item, body(), status));
      buttons.push(b);
      return b;
    };
    const message = h('input', {
      type: 'text',
      class: 'deny-message',
      placeholder: 'Tell the model why, or what to do instead',
      'aria-label': 'Message to the model',
      maxlength: '2000',
    });
    const denyWith = h('form', { class: 'deny-with', hidden: true }, message, h('button', { type: 'submit', class: 'btn danger' }, 'Send denial'));
    denyWith.addEventListener('submit', (e) => {
      e.preventDefault();
      const text = message.value.trim();
      if (!text) {
        message.focus();
        return;
      }
      this.send(item, { decision: 'deny', scope: 'once', message: text }, status);
    });
    const row = h(
      'div',
      { class: 'approval-buttons' },
      btn('Allow once', 'primary', () => ({ decision: 'allow', scope: 'once' })),
      btn('Allow for this session', '', () => ({ decision: 'allow', scope: 'session' })),
      btn('Always allow here', '', () => ({ decision: 'allow', scope: 'always' })),
      btn('Deny', 'danger', () => ({ decision: 'deny', scope: 'once' })),
    );
    const denyMsgBtn = h('button', { type: 'button', class: 'btn danger-outline', dataset: { answer: 'Deny with message' } }, 'Deny with message…');
    denyMsgBtn.addEventListener('click', () => {
      denyWith.hidden = false;
      message.focus();
    });
    buttons.push(denyMsgBtn);
    row.appendChild(denyMsgBtn);

    const more = this.items.length > 1 ? h('span', { class: 'count' }, '1 of ' + this.items.length) : null;
    this.el.append(
      h(
        'div',
        { class: 'approval', role: 'alertdialog', 'aria-labelledby': 'approval-title', dataset: { request: item.id } },
        h(
          'div',
          { class: 'approval-head' },
          h('span', { class: 'badge' }, 'Approval needed'),
          item.subagent ? h('span', { class: 'badge sub', title: 'Asked by a subagent (session ' + (item.sessionId || '') + ')' }, 'subagent') : null,
          h('strong', { id: 'approval-title' }, item.summary || item.toolName),
          more,
        ),
        item.reason ? h('div', { class: 'reason' }, item.reason) : null,
        detail(item),
        item.suggest ? h('div', { class: 'grants' }, '“For this session” and “always” allow ', h('code', null, item.suggest)) : null,
        row,
        denyWith,
        status,
      ),
    );
    message.value = typed;
    denyWith.hidden = !typing;
    this.message = message;
    this.denyWith = denyWith;
    this.buttons = buttons;
    const wait = this.inertUntil - Date.now();
    if (wait > 0) {
      // Inert for a moment: nothing answers a request before it could be
      // read.
      this.el.classList.add('inert');
      for (const b of buttons) b.disabled = true;
      setTimeout(() => {
        if (this.buttons !== buttons) return;
        this.el.classList.remove('inert');
        if (!this.busy) for (const b of buttons) b.disabled = false;
      }, wait);
    } else if (this.busy) {
      for (const b of buttons) b.disabled = true;
    }
  }

  async send(item, body, status) {
    if (this.busy) return;
    this.busy = true;
    for (const b of this.buttons) b.disabled = true;
    status.textContent = 'Sending…';
    try {
      await this.answer(item, body);
      this.resolved(item.id);
    } catch (e) {
      status.textContent = e.message;
      status.classList.add('error');
      for (const b of this.buttons) b.disabled = false;
      if (e.status === 404 || e.status === 409) {
        // Answered elsewhere or no longer pending: drop it, the next
        // refresh tells the truth.
        setTimeout(() => this.resolved(item.id), 1500);
      }
    } finally {
      this.busy = false;
    }
  }
}

// fromEvent makes a dock item of a permission.requested event.
export function fromEvent(ev) {
  return {
    id: ev.requestId,
    sessionId: ev.sessionId,
    subagent: !!ev.parentSessionId,
    toolCallId: ev.toolCallId,
    toolName: ev.toolName,
    summary: ev.summary,
    arguments: ev.arguments,
    reason: ev.error || '',
    suggest: ev.text || '',
  };
}

// fromApproval makes a dock item of a stored approval (GET session) of
// the session viewId or, when its sessionId says so, of a subagent of it.
export function fromApproval(a, viewId) {
  let args = a.call ? a.call.arguments : undefined;
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      /* shown as text */
    }
  }
  const subagent = !!viewId && !!a.sessionId && a.sessionId !== viewId;
  return { id: a.id, sessionId: a.sessionId, subagent, toolCallId: a.call && a.call.id, toolName: a.call && a.call.name, summary: a.summary, arguments: args, reason: '', suggest: '' };
}

// detail shows exactly what an approval lets happen.
function detail(item) {
  const a = item.arguments;
  if (a && typeof a === 'object') {
    if (typeof a.command === 'string') return h('pre', { class: 'cmd' }, '$ ' + a.command);
    if (typeof a.patch === 'string') return diffView(a.patch);
    if (item.toolName === 'edit_file') {
      const lines = ['--- ' + (a.path || ''), '+++ ' + (a.path || '')];
      for (const l of String(a.old_string || '').split('\n')) lines.push('-' + l);
      for (const l of String(a.new_string || '').split('\n')) lines.push('+' + l);
      return diffView(lines.join('\n'));
    }
    if (item.toolName === 'write_file') {
      const lines = ['+++ ' + (a.path || '')];
      for (const l of String(a.content || '').split('\n')) lines.push('+' + l);
      return diffView(lines.join('\n'));
    }
  }
  return h('pre', { class: 'json' }, typeof a === 'string' ? a : JSON.stringify(a, null, 2));
}
