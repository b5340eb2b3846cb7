// transcript.js: turns a session's events into the transcript on screen.
//
// The event stream is the only input: a reload, a reconnect or a second
// tab replays the stored events from the start and then follows the live
// ones, so every client shows the same thing. Stored events carry a
// sequence and are applied once (a replay that overlaps is skipped);
// deltas carry none and are applied only while their message is still
// open, so a delta that arrives after its complete message (a reconnect
// at the wrong moment) cannot duplicate text.
//
// Rendering is incremental: each event touches only its own block, and a
// streaming answer re-renders only its unfinished tail, once per frame.

import { h, clear } from './dom.js';
import { render, StreamingMarkdown } from './markdown.js';
import { duration } from './format.js';
import { SubagentView } from './subagents.js';

// Output of a running command shown live, at most (the complete result
// replaces it).
const LIVE_OUTPUT_CHARS = 64 * 1024;
// Lines of a result or diff shown before "show all".
const PREVIEW_LINES = 12;
const DIFF_LINES = 80;

const EDIT_TOOLS = new Set(['edit_file', 'write_file', 'apply_patch']);

export class Transcript {
  // root is the element the transcript is rendered into; hooks.sessionId
  // is the session's id, and the other hooks are callbacks the app uses
  // to follow the session: onUsage(ev),
  // onStatus(status), onApproval(kind, ev), onQueue(kind, ev),
  // onTurn(kind, ev), onChange() (something was added or grew).
  constructor(root, hooks = {}) {
    this.root = root;
    this.hooks = hooks;
    this.reset();
  }

  reset() {
    clear(this.root);
    this.lastSeq = 0;
    this.drafts = new Map(); // turnId:step -> Draft
    this.closed = new Set(); // turnId:step whose message is complete
    this.tools = new Map(); // toolCallId -> ToolCard
    this.todo = null;
    this.pending = new Set(); // drafts waiting for a frame
    this.frame = 0;
  }

  // apply applies one event. It returns false for a stored event it has
  // already applied.
  apply(ev) {
    // A subagent's event on its parent's stream (subagents.js): never one
    // of this session's own, whatever its sequence says.
    if (ev.parentSessionId && ev.sessionId !== this.hooks.sessionId) {
      this.nested(ev);
      return true;
    }
    // The stream's own events (stream.*) carry the sequence they follow,
    // not one of their own.
    if (ev.sequence > 0 && !ev.type.startsWith('stream.')) {
      if (ev.sequence <= this.lastSeq) return false;
      this.lastSeq = ev.sequence;
    }
    const fn = this['on_' + ev.type.replace(/\./g, '_')];
    if (fn) fn.call(this, ev);
    return true;
  }

  changed() {
    if (this.hooks.onChange) this.hooks.onChange();
  }

  add(el) {
    this.root.appendChild(el);
    this.changed();
    return el;
  }

  key(ev) {
    return (ev.turnId || '') + ':' + (ev.step || 0);
  }

  draft(ev) {
    const k = this.key(ev);
    let d = this.drafts.get(k);
    if (!d) {
      d = new Draft();
      this.drafts.set(k, d);
      this.add(d.el);
    }
    return d;
  }

  schedule(d) {
    this.pending.add(d);
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => this.flush());
  }

  // flush renders the drafts that changed since the last frame.
  flush() {
    this.frame = 0;
    for (const d of this.pending) d.render();
    this.pending.clear();
    this.changed();
  }

  // nested shows a subagent's event: its approvals go to the dock like
  // the session's own, the rest under its task call's card.
  nested(ev) {
    if (ev.type === 'permission.requested' || ev.type === 'permission.resolved') {
      if (this.hooks.onApproval) this.hooks.onApproval(ev.type === 'permission.requested' ? 'requested' : 'resolved', ev);
    }
    if (!ev.parentToolCallId) return;
    this.tool(ev.parentToolCallId, 'task').subagent().handle(ev);
    this.changed();
  }

  // ---- events ----

  on_turn_started(ev) {
    if (this.hooks.onTurn) this.hooks.onTurn('started', ev);
  }

  on_message_delta(ev) {
    if (this.closed.has(this.key(ev)) || !ev.text) return;
    const d = this.draft(ev);
    d.text += ev.text;
    this.schedule(d);
  }

  on_reasoning_delta(ev) {
    if (this.closed.has(this.key(ev)) || !ev.text) return;
    const d = this.draft(ev);
    d.reasoning += ev.text;
    this.schedule(d);
  }

  on_message_completed(ev) {
    const m = ev.message;
    if (!m) return;
    if (m.role === 'user') {
      this.add(userBlock(m.content, m.images));
      return;
    }
    if (m.role !== 'assistant') return;
    const k = this.key(ev);
    this.closed.add(k);
    let d = this.drafts.get(k);
    if (!d && !m.content && !m.reasoning) {
      // A message that only calls tools: its cards say it all.
    } else {
      if (!d) d = this.draft(ev);
      this.pending.delete(d);
      d.finish(m);
      this.drafts.delete(k);
    }
    for (const c of m.tool_calls || []) {
      this.tool(c.id, c.name).setCall(c);
    }
    this.changed();
  }

  tool(id, name) {
    let t = this.tools.get(id);
    if (!t) {
      t = new ToolCard(id, name);
      this.tools.set(id, t);
      this.add(t.el);
    }
    return t;
  }

  on_tool_started(ev) {
    this.tool(ev.toolCallId, ev.toolName).started(ev);
    this.changed();
  }

  on_tool_output(ev) {
    this.tool(ev.toolCallId, ev.toolName).output(ev.text || '');
    this.changed();
  }

  on_tool_completed(ev) {
    this.tool(ev.toolCallId, ev.toolName).completed(ev);
    this.changed();
  }

  on_permission_requested(ev) {
    if (ev.toolCallId) this.tool(ev.toolCallId, ev.toolName).waiting(ev);
    if (this.hooks.onApproval) this.hooks.onApproval('requested', ev);
  }

  on_permission_resolved(ev) {
    if (ev.toolCallId) this.tool(ev.toolCallId, ev.toolName).resolved(ev);
    if (this.hooks.onApproval) this.hooks.onApproval('resolved', ev);
  }

  on_usage(ev) {
    if (this.hooks.onUsage) this.hooks.onUsage(ev);
  }

  on_session_updated(ev) {
    if (this.hooks.onStatus) this.hooks.onStatus(ev.status, ev);
  }

  on_input_queued(ev) {
    if (this.hooks.onQueue) this.hooks.onQueue('queued', ev);
  }

  // The stream's own events (never stored): stream.ready follows the
  // replay with the session as it is now; stream.closing says the server
  // is going away; stream.heartbeat only proves the connection lives.
  on_stream_ready(ev) {
    if (this.hooks.onStream) this.hooks.onStream('ready', ev);
  }

  on_stream_closing(ev) {
    if (this.hooks.onStream) this.hooks.onStream('closing', ev);
  }

  on_input_removed(ev) {
    if (this.hooks.onQueue) this.hooks.onQueue('removed', ev);
  }

  on_input_edited(ev) {
    if (this.hooks.onQueue) this.hooks.onQueue('edited', ev);
  }

  // A cancelled or failed turn gives back the messages queued behind it.
  on_input_returned(ev) {
    if (this.hooks.onQueue) this.hooks.onQueue('returned', ev);
  }

  endTurn(kind, ev) {
    // Whatever was streaming is over; keep what arrived.
    for (const [k, d] of this.drafts) {
      if (k.startsWith((ev.turnId || '') + ':')) {
        this.pending.delete(d);
        d.render();
        d.stop();
        this.drafts.delete(k);
      }
    }
    for (const t of this.tools.values()) t.turnEnded(ev.turnId, kind);
    if (this.hooks.onTurn) this.hooks.onTurn(kind, ev);
  }

  on_turn_completed(ev) {
    this.endTurn('completed', ev);
    if (this.hooks.onUsage) this.hooks.onUsage(ev);
  }

  on_turn_failed(ev) {
    this.endTurn('failed', ev);
    this.add(notice('error', 'Turn failed', ev.error || 'unknown error'));
  }

  on_turn_cancelled(ev) {
    this.endTurn('cancelled', ev);
    this.add(notice('muted', 'Cancelled', ''));
  }

  on_turn_paused(ev) {
    this.endTurn('paused', ev);
    this.add(notice('warn', 'Paused', 'The turn waits for an approval; it goes on when someone answers.'));
  }

  on_compaction(ev) {
    const c = ev.compaction || {};
    const body = h('details', { class: 'compaction' }, h('summary', null, 'Older messages summarised for the model (' + (c.trigger || 'auto') + ')'));
    const md = h('div', { class: 'md' });
    md.appendChild(render(c.summary || ''));
    body.appendChild(md);
    this.add(h('div', { class: 'block notice muted' }, body));
  }

  on_warning(ev) {
    this.add(notice('warn', 'Warning', ev.text || ''));
  }

  on_hook_warning(ev) {
    this.add(notice('warn', 'Hook', ev.text || ''));
  }

  on_provider_retry(ev) {
    const wait = ev.delayMs ? ' in ' + duration(ev.delayMs) : '';
    this.add(notice('muted', 'Provider error, retrying' + wait + ' (attempt ' + (ev.attempt || 1) + ')', ev.error || ''));
  }

  on_todo_updated(ev) {
    const list = h('ul', { class: 'todos' });
    for (const t of ev.todos || []) {
      const mark = t.status === 'completed' ? '✓' : t.status === 'in_progress' ? '▸' : '○';
      list.appendChild(h('li', { class: 'todo ' + (t.status || '') }, h('span', { class: 'mark', 'aria-hidden': 'true' }, mark), t.content || ''));
    }
    const card = h('div', { class: 'block todo-card' }, h('div', { class: 'label' }, 'Tasks'), list);
    // Only the latest list is worth reading; an older one is replaced.
    if (this.todo && this.todo.parentNode) this.todo.remove();
    this.todo = this.add(card);
  }
}

// userBlock is a message of the user's, with the names of the images it
// carried (events never carry their data).
function userBlock(text, images) {
  const names = (images || []).map((i) => (i.name || 'image') + (i.width ? ' (' + i.width + '×' + i.height + ')' : ''));
  const label = names.length === 1 ? 'Image: ' : 'Images: ';
  return h('div', { class: 'block user' }, h('div', { class: 'bubble' }, text), names.length ? h('div', { class: 'images' }, label + names.join(' · ')) : null);
}

function notice(kind, title, text) {
  return h('div', { class: 'block notice ' + kind, role: kind === 'error' ? 'alert' : null }, h('strong', null, title), text ? ' ' : null, text ? h('span', null, text) : null);
}

// Draft is one assistant message: reasoning (collapsed) and the answer,
// streamed, then final.
class Draft {
  constructor() {
    this.text = '';
    this.reasoning = '';
    this.shownText = '';
    this.shownReasoning = '';
    this.el = h('div', { class: 'block assistant streaming' });
    this.thinking = null;
    this.md = null;
    this.body = null;
  }

  ensureReasoning() {
    if (this.thinking) return;
    this.reasonText = h('div', { class: 'reasoning-text' });
    this.reasonLabel = h('span', null, 'Thinking…');
    this.thinking = h('details', { class: 'reasoning' }, h('summary', null, this.reasonLabel), this.reasonText);
    this.el.insertBefore(this.thinking, this.el.firstChild);
  }

  ensureBody() {
    if (this.body) return;
    this.body = h('div', { class: 'md' });
    this.el.appendChild(this.body);
    this.md = new StreamingMarkdown(this.body);
  }

  render() {
    if (this.reasoning !== this.shownReasoning) {
      this.ensureReasoning();
      // Append only what is new: the text node grows, the reader's
      // selection and the open/closed state stay.
      this.reasonText.appendChild(document.createTextNode(this.reasoning.slice(this.shownReasoning.length)));
      this.shownReasoning = this.reasoning;
    }
    if (this.text !== this.shownText) {
      this.ensureBody();
      this.md.update(this.text);
      this.shownText = this.text;
      if (this.reasonLabel) this.reasonLabel.textContent = 'Reasoning';
    }
  }

  finish(m) {
    this.el.classList.remove('streaming');
    if (m.reasoning) {
      this.ensureReasoning();
      if (m.reasoning !== this.shownReasoning) this.reasonText.replaceChildren(m.reasoning);
      this.reasonLabel.textContent = 'Reasoning';
    }
    if (m.content) {
      this.ensureBody();
      this.md.finish(m.content);
    } else if (this.body) {
      this.body.remove();
    }
    if (m.model) this.el.dataset.model = m.model;
  }

  stop() {
    this.el.classList.remove('streaming');
    if (this.reasonLabel) this.reasonLabel.textContent = 'Reasoning';
  }
}

// ToolCard is one tool call: what was asked, its state, live output, and
// its result (a coloured diff for an edit).
class ToolCard {
  constructor(id, name) {
    this.id = id;
    this.name = name || 'tool';
    this.turnId = '';
    this.state = 'pending';
    this.liveLen = 0;
    this.icon = h('span', { class: 'icon', 'aria-hidden': 'true' });
    this.title = h('span', { class: 'title' }, this.name);
    this.meta = h('span', { class: 'meta' });
    this.stateLabel = h('span', { class: 'state' });
    this.args = h('div', { class: 'args' });
    this.live = null;
    this.result = h('div', { class: 'result' });
    this.details = h('details', { class: 'tool-body' }, h('summary', null, 'Details'), this.args);
    this.el = h(
      'div',
      { class: 'block tool', dataset: { tool: this.name, call: id } },
      h('div', { class: 'tool-head' }, this.icon, this.title, h('span', { class: 'name' }, this.name), this.stateLabel, this.meta),
      this.result,
      this.details,
    );
    this.setState('pending');
  }

  // subagent returns the view of the subagent this (task) call started,
  // made on first use.
  subagent() {
    if (!this.sub) {
      this.sub = new SubagentView();
      this.el.insertBefore(this.sub.el, this.result);
    }
    return this.sub;
  }

  setState(s, label) {
    this.state = s;
    this.el.dataset.state = s;
    const labels = { pending: 'queued', running: 'running', waiting: 'needs approval', ok: '', failed: 'failed', interrupted: 'interrupted' };
    this.stateLabel.textContent = label !== undefined ? label : labels[s] || '';
    const icons = { pending: '○', running: '◌', waiting: '!', ok: '✓', failed: '✗', interrupted: '■' };
    this.icon.textContent = icons[s] || '';
  }

  setCall(c) {
    if (c.name) this.name = c.name;
    this.setArgs(parseArgs(c.arguments));
  }

  setArgs(args) {
    if (args === undefined || args === null) return;
    clear(this.args);
    this.args.appendChild(argsView(this.name, args));
    // A command is what the reader wants to see without opening anything.
    if (typeof args === 'object' && typeof args.command === 'string' && !this.cmd) {
      this.cmd = h('pre', { class: 'cmd' }, '$ ' + args.command);
      this.el.insertBefore(this.cmd, this.result);
    }
  }

  started(ev) {
    this.turnId = ev.turnId || this.turnId;
    if (ev.summary) this.title.textContent = ev.summary;
    if (ev.arguments !== undefined) this.setArgs(ev.arguments);
    this.setState('running');
  }

  waiting(ev) {
    this.turnId = ev.turnId || this.turnId;
    if (ev.summary) this.title.textContent = ev.summary;
    if (ev.arguments !== undefined) this.setArgs(ev.arguments);
    this.setState('waiting');
  }

  resolved(ev) {
    const ok = ev.ok === undefined || ev.ok === true;
    this.setState(ok ? 'running' : 'failed', ok ? 'allowed' : 'denied');
    if (!ok && ev.text) this.meta.textContent = 'said: ' + ev.text;
  }

  output(text) {
    // Output that arrives after the result (a replay overlapping the live
    // stream) is already in the result.
    if (this.done) return;
    if (this.state === 'pending') this.setState('running');
    if (!this.live) {
      this.live = h('pre', { class: 'live-output' });
      this.result.appendChild(this.live);
    }
    this.liveLen += text.length;
    this.live.appendChild(document.createTextNode(text));
    // Keep the live view bounded: drop the oldest pieces.
    while (this.liveLen > LIVE_OUTPUT_CHARS && this.live.firstChild && this.live.childNodes.length > 1) {
      this.liveLen -= this.live.firstChild.textContent.length;
      this.live.removeChild(this.live.firstChild);
    }
    this.live.scrollTop = this.live.scrollHeight;
  }

  completed(ev) {
    const ok = ev.ok === undefined || ev.ok === null ? !(ev.message && ev.message.isError) : ev.ok;
    if (ev.summary) this.title.textContent = ev.summary;
    this.done = true;
    this.setState(ok ? 'ok' : 'failed');
    if (ev.durationMs) this.meta.textContent = duration(ev.durationMs);
    const content = ev.message ? ev.message.content : ev.preview || '';
    clear(this.result);
    this.live = null;
    const diff = EDIT_TOOLS.has(this.name) ? extractDiff(content) : '';
    if (diff) {
      const head = content.slice(0, content.length - diff.length).trim();
      if (head) this.result.appendChild(h('div', { class: 'result-line' }, head));
      this.result.appendChild(diffView(diff));
    } else if (content) {
      this.result.appendChild(preview(content, ok ? '' : 'error'));
    }
  }

  turnEnded(turnId, kind) {
    if (turnId && this.turnId && turnId !== this.turnId) return;
    if (this.state === 'pending' || this.state === 'running') {
      if (kind !== 'paused') this.setState('interrupted');
    }
  }
}

function parseArgs(raw) {
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

// argsView shows a call's arguments: strings as they are (multi-line ones
// in a block), anything else as JSON.
export function argsView(tool, args) {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return h('pre', { class: 'json' }, typeof args === 'string' ? args : JSON.stringify(args, null, 2));
  }
  const dl = h('dl', { class: 'kv' });
  for (const [k, v] of Object.entries(args)) {
    dl.appendChild(h('dt', null, k));
    if (typeof v === 'string' && (v.includes('\n') || v.length > 80)) dl.appendChild(h('dd', null, h('pre', null, v)));
    else dl.appendChild(h('dd', null, typeof v === 'string' ? v : JSON.stringify(v)));
  }
  return dl;
}

// extractDiff returns the unified diff in a tool result, from its first
// "--- " line on, or "".
export function extractDiff(s) {
  if (!s) return '';
  if (s.startsWith('--- ')) return s;
  const i = s.indexOf('\n--- ');
  return i >= 0 ? s.slice(i + 1) : '';
}

// diffView colours a unified diff.
export function diffView(diff) {
  const lines = diff.replace(/\n$/, '').split('\n');
  const pre = h('pre', { class: 'diff' });
  const show = (from, to) => {
    for (let i = from; i < to; i++) {
      const l = lines[i];
      let cls = 'ctx';
      if (l.startsWith('+++') || l.startsWith('---')) cls = 'file';
      else if (l.startsWith('@@')) cls = 'hunk';
      else if (l.startsWith('+')) cls = 'add';
      else if (l.startsWith('-')) cls = 'del';
      else if (l.startsWith('\\')) cls = 'meta';
      pre.appendChild(h('span', { class: 'line ' + cls }, l + '\n'));
    }
  };
  const first = Math.min(lines.length, DIFF_LINES);
  show(0, first);
  const wrap = h('div', { class: 'diff-wrap' }, pre);
  if (lines.length > first) {
    const more = h('button', { class: 'more', type: 'button' }, 'Show ' + (lines.length - first) + ' more lines');
    more.addEventListener('click', () => {
      show(first, lines.length);
      more.remove();
    });
    wrap.appendChild(more);
  }
  return wrap;
}

// preview shows the first lines of a result, with the rest behind a
// button.
function preview(text, cls) {
  const lines = text.replace(/\n$/, '').split('\n');
  const pre = h('pre', { class: 'output ' + cls }, lines.slice(0, PREVIEW_LINES).join('\n'));
  const wrap = h('div', { class: 'output-wrap' }, pre);
  if (lines.length > PREVIEW_LINES) {
    const more = h('button', { class: 'more', type: 'button' }, 'Show all ' + lines.length + ' lines');
    more.addEventListener('click', () => {
      pre.textContent = text;
      more.remove();
    });
    wrap.appendChild(more);
  }
  return wrap;
}
