// subagents.js: a subagent's progress, shown under the card of the task
// call that started it (as the terminal shows it under its card).
//
// A subagent runs in a session of its own; its events reach the parent's
// stream as they happen, marked with parentSessionId and
// parentToolCallId, without an id of the parent's stream (they are never
// replayed there: a reload shows the task card and, once the subagent is
// done, its result). Its approval requests go to the approval dock like
// the parent's own; everything else lands here: the subagent's type, its
// tool calls (the last few, each with its state), and what it is doing
// now.

import { h, clear } from './dom.js';

// Finished tool calls shown, at most; older ones are counted.
const SHOWN_CALLS = 5;

const ICONS = { running: '◌', waiting: '!', ok: '✓', failed: '✗' };

export class SubagentView {
  constructor() {
    this.agent = '';
    this.calls = []; // {id, summary, state}, oldest first
    this.answer = '';
    this.state = 'running';
    this.label = h('span', { class: 'sub-agent' }, 'subagent');
    this.stateEl = h('span', { class: 'sub-state' });
    this.list = h('ul', { class: 'sub-calls' });
    this.now = h('div', { class: 'sub-now' });
    this.el = h('div', { class: 'subagent', dataset: { state: 'running' } }, h('div', { class: 'sub-head' }, '↳ ', this.label, this.stateEl), this.list, this.now);
  }

  // handle folds one of the subagent's events in.
  handle(ev) {
    if (ev.sessionId) this.el.dataset.session = ev.sessionId;
    switch (ev.type) {
      case 'session.created':
        if (ev.session && ev.session.agent) this.agent = ev.session.agent;
        break;
      case 'tool.started':
        this.call(ev).state = 'running';
        this.setNow('');
        break;
      case 'permission.requested':
        this.call(ev).state = 'waiting';
        break;
      case 'permission.resolved':
        if (ev.ok === false) this.call(ev).state = 'failed';
        else this.call(ev).state = 'running';
        break;
      case 'tool.completed': {
        const ok = ev.ok === undefined || ev.ok === null ? !(ev.message && ev.message.isError) : ev.ok;
        this.call(ev).state = ok ? 'ok' : 'failed';
        break;
      }
      case 'message.delta':
        this.answer += ev.text || '';
        this.setNow(lastLine(this.answer));
        break;
      case 'message.completed':
        if (ev.message && ev.message.role === 'assistant') {
          this.answer = '';
          this.setNow(lastLine(ev.message.content || ''));
        }
        break;
      case 'turn.completed':
        this.state = 'ok';
        break;
      case 'turn.failed':
        this.state = 'failed';
        this.setNow(ev.error || 'failed');
        break;
      case 'turn.cancelled':
        this.state = 'failed';
        this.setNow('cancelled');
        break;
      default:
        return;
    }
    this.render();
  }

  call(ev) {
    let c = this.calls.find((x) => x.id === ev.toolCallId);
    if (!c) {
      c = { id: ev.toolCallId, summary: ev.summary || ev.toolName || 'tool', state: 'running' };
      this.calls.push(c);
    }
    if (ev.summary) c.summary = ev.summary;
    return c;
  }

  setNow(text) {
    this.nowText = text;
  }

  render() {
    this.label.textContent = (this.agent ? this.agent + ' ' : '') + 'subagent';
    this.el.dataset.state = this.state;
    this.stateEl.textContent = this.state === 'ok' ? ' · done' : this.state === 'failed' ? ' · stopped' : '';
    clear(this.list);
    const hidden = Math.max(0, this.calls.length - SHOWN_CALLS);
    if (hidden) this.list.appendChild(h('li', { class: 'sub-more' }, hidden + ' earlier call' + (hidden === 1 ? '' : 's')));
    for (const c of this.calls.slice(hidden)) {
      this.list.appendChild(h('li', { class: 'sub-call', dataset: { state: c.state, call: c.id || '' } }, h('span', { class: 'icon', 'aria-hidden': 'true' }, ICONS[c.state] || ''), ' ', c.summary));
    }
    this.now.textContent = this.nowText || '';
    this.now.hidden = !this.nowText;
  }
}

// lastLine returns the last non-empty line of s, cut to a line's width.
function lastLine(s) {
  const lines = s.split('\n').filter((l) => l.trim());
  const l = lines.length ? lines[lines.length - 1] : '';
  return l.length > 200 ? l.slice(0, 200) + '…' : l;
}
