// Unit tests of the panel's modules, run in a real Chromium by
// browser_test.go on a page served with the panel's CSP. run() returns one
// {name, ok, msg} per check.

import { render, StreamingMarkdown, stableCut, safeHref } from '/markdown.js';
import { Parser, EventStream } from '/stream.js';
import { bindComposer } from '/composer.js';
import { Transcript } from '/transcript.js';
import { ApprovalDock } from '/approvals.js';
import { SessionView } from '/session.js';

const results = [];
function check(name, ok, msg = '') {
  results.push({ name, ok: !!ok, msg: ok ? '' : String(msg) });
}
function eq(name, got, want) {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  check(name, g === w, 'got ' + g + ', want ' + w);
}

const ALLOWED_TAGS = new Set('P H1 H2 H3 H4 H5 H6 UL OL LI CODE PRE BLOCKQUOTE HR BR A STRONG EM DEL TABLE THEAD TBODY TR TH TD DIV SPAN BUTTON INPUT'.split(' '));
const ALLOWED_ATTRS = new Set(['href', 'target', 'rel', 'class', 'start', 'type', 'checked', 'disabled', 'title', 'aria-label']);

function md(src) {
  const div = document.createElement('div');
  div.appendChild(render(src));
  return div;
}

// safe reports what in a rendered tree could run or load something.
function unsafe(root) {
  const bad = [];
  for (const el of root.querySelectorAll('*')) {
    if (!ALLOWED_TAGS.has(el.tagName)) bad.push('tag ' + el.tagName);
    for (const a of el.attributes) {
      if (!ALLOWED_ATTRS.has(a.name)) bad.push(el.tagName + ' attribute ' + a.name);
    }
    if (el.tagName === 'A') {
      const href = el.getAttribute('href') || '';
      if (!/^(https?:\/\/|mailto:)/i.test(href)) bad.push('link ' + href);
      if (el.rel !== 'noopener noreferrer nofollow') bad.push('rel ' + el.rel);
    }
    if (el.tagName === 'INPUT' && el.type !== 'checkbox') bad.push('input ' + el.type);
  }
  return bad;
}

function markdownSafety() {
  const payloads = [
    '<script>alert(1)</script>',
    '<img src=x onerror=alert(1)>',
    '<a href="javascript:alert(1)">x</a>',
    '[x](javascript:alert(1))',
    '[x](JaVaScRiPt:alert(1))',
    '[x](  javascript:alert(1))',
    '[x](<javascript:alert(1)>)',
    '[x](java&#x09;script:alert(1))',
    '[x](data:text/html,<script>alert(1)</script>)',
    '[x](vbscript:msgbox)',
    '[x](//evil.example/)',
    '<javascript:alert(1)>',
    '![x](javascript:alert(1))',
    '![x](https://tracker.example/pixel.gif)',
    '[x](https://ok.example/"onmouseover="alert(1))',
    '`<b>` **<i>x</i>** <style>body{}</style> <iframe src=x></iframe>',
    '| a | b |\n|---|---|\n| <img src=x onerror=1> | [y](javascript:1) |',
    '- [x] <svg onload=alert(1)>\n- [ ] ok',
    '```html\n<script>alert(1)</script>\n```',
    '> <object data=x>',
    'http://x.example/"><script>alert(1)</script>',
  ];
  for (const p of payloads) {
    const root = md(p);
    const bad = unsafe(root);
    check('markdown is safe: ' + p, bad.length === 0, bad.join(', '));
  }
  const s = md('<script>alert(1)</script>');
  check('raw HTML is shown as text', s.textContent.includes('<script>alert(1)</script>'), s.textContent);
  const img = md('![a cat](https://img.example/cat.png)');
  check('images are linked, not loaded', !img.querySelector('img') && img.querySelector('a').href === 'https://img.example/cat.png', img.textContent);
  eq('safeHref', ['https://a.example', 'mailto:x@y.example', 'javascript:1', 'java\nscript:1', '/rel', 'ftp://x'].map((u) => safeHref(u)), ['https://a.example', 'mailto:x@y.example', null, null, null, null]);
  const link = md('[ok](https://example.com/a_b)').querySelector('a');
  check('a safe link', link && link.getAttribute('href') === 'https://example.com/a_b' && link.target === '_blank' && link.rel === 'noopener noreferrer nofollow', link && link.outerHTML);
}

function markdownStructure() {
  const tags = (root) => [...root.querySelectorAll('*')].map((e) => e.tagName.toLowerCase()).join(' ');
  eq('headings and inlines', tags(md('# T\n\npara **b** *i* `c` ~~d~~')), 'h1 p strong em code del');
  eq('setext heading', tags(md('Title\n=====\n\ntext')), 'h1 p');
  const nested = md('- a\n  - b\n- c');
  eq('nested list', tags(nested), 'ul li ul li li');
  eq('nested list text', [...nested.querySelectorAll('li')].map((l) => l.firstChild.textContent), ['a', 'b', 'c']);
  const ol = md('3. x\n4. y').querySelector('ol');
  eq('ordered list start', [ol.getAttribute('start'), ol.children.length], ['3', 2]);
  const code = md('```go\nx := `y`\n  <b>\n```\nafter');
  eq('fenced code', [code.querySelector('code').className, code.querySelector('code').textContent, code.querySelector('p').textContent], ['lang-go', 'x := `y`\n  <b>', 'after']);
  eq('unclosed fence', md('```\ncode').querySelector('code').textContent, 'code');
  const t = md('|a|b|\n|-|:-:|\n|1|2|');
  eq('table', [[...t.querySelectorAll('th')].map((x) => x.textContent), [...t.querySelectorAll('td')].map((x) => x.textContent), t.querySelectorAll('td')[1].className], [['a', 'b'], ['1', '2'], 'al-center']);
  eq('intraword underscores', tags(md('snake_case_name and __init__')), 'p strong');
  eq('bare URL without its full stop', md('see https://x.example/a.').querySelector('a').getAttribute('href'), 'https://x.example/a');
  eq('URL in parentheses', md('(https://x.example/a_(b))').querySelector('a').getAttribute('href'), 'https://x.example/a_(b)');
  const task = md('- [x] done\n- [ ] todo');
  eq('task list', [...task.querySelectorAll('input')].map((i) => i.checked), [true, false]);
  eq('blockquote', tags(md('> a\n> b')), 'blockquote p');
  eq('hard break', tags(md('a  \nb')), 'p br');
  eq('escapes', md('\\*not em\\*').textContent, '*not em*');
  eq('code span with backticks', md('`` a ` b ``').querySelector('code').textContent, 'a ` b');
  const t0 = performance.now();
  md('*'.repeat(50000) + 'a ' + '_'.repeat(50000) + ' [' .repeat(20000) + '`'.repeat(30000));
  const ms = performance.now() - t0;
  check('pathological input renders fast (' + Math.round(ms) + ' ms)', ms < 1500, ms);
}

function streaming() {
  const docs = [
    '# Plan\n\nFirst I read the file.\n\n```go\nfunc main() {\n\tfmt.Println("hi")\n}\n```\n\nThen:\n\n1. edit\n2. build\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nDone, see https://x.example.\n',
    'para one\nstill one\n\npara two\n\n> quote\n\n- a\n\n- b\n\n  more b\n\n- c\n\nend',
    '```\nunclosed\n\nstill code\n\n',
    'text\n\n    indented code\n\n    more\n\nafter',
  ];
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (const [k, doc] of docs.entries()) {
    const el = document.createElement('div');
    const sm = new StreamingMarkdown(el);
    let pos = 0;
    let firstKept = true;
    let firstNode = null;
    while (pos < doc.length) {
      pos = Math.min(doc.length, pos + 1 + Math.floor(rand() * 9));
      sm.update(doc.slice(0, pos));
      if (!firstNode && sm.stable.firstChild) firstNode = sm.stable.firstChild;
      if (firstNode && sm.stable.firstChild !== firstNode) firstKept = false;
    }
    const want = md(doc);
    eq('streamed text equals the rendered text (doc ' + k + ')', el.textContent, want.textContent);
    check('the finished part is not rendered again (doc ' + k + ')', firstKept, 'the first stable node was replaced');
    sm.finish(doc);
    check('finish renders the whole document (doc ' + k + ')', el.innerHTML === want.innerHTML, el.innerHTML);
  }
  eq('stableCut stops before an unfinished line', stableCut('a\n\nb'), 0);
  eq('stableCut after a blank line', stableCut('a\n\nb\n'), 3);
  eq('stableCut not inside a fence', stableCut('```\na\n\nb\n'), 0);
  eq('stableCut not before a list item', stableCut('- a\n\n- b\n'), 0);
  eq('stableCut not before an indented line', stableCut('- a\n\n  b\n'), 0);
}

function sseParser() {
  const stream = 'id: 1\nevent: a\ndata: {"x":1}\n\n: comment\n\nevent: b\ndata: line1\ndata: line2\n\nid: 3\r\nevent: c\r\ndata: z\r\n\r\nevent: d\ndata: no-id\n\n';
  const want = [
    { event: 'a', data: '{"x":1}', id: '1' },
    { event: 'b', data: 'line1\nline2', id: '' },
    { event: 'c', data: 'z', id: '3' },
    { event: 'd', data: 'no-id', id: '' },
  ];
  for (let cut = 0; cut <= stream.length; cut++) {
    const got = [];
    const p = new Parser((e) => got.push(e));
    p.push(stream.slice(0, cut));
    p.push(stream.slice(cut));
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      eq('SSE parser, split at ' + cut, got, want);
      return;
    }
  }
  check('SSE parser, split at every position', true);
  const got = [];
  const s = new EventStream('/x', { after: 5, onEvent: (e) => got.push(e), onState: () => {} });
  s.dispatch({ id: '4', data: '{"type":"old","sequence":4}' });
  s.dispatch({ id: '6', data: '{"type":"new","sequence":6}' });
  s.dispatch({ id: '', data: '{"type":"message.delta","sequence":0}' });
  s.dispatch({ id: '6', data: '{"type":"again","sequence":6}' });
  s.dispatch({ id: '', data: '{"type":"stream.heartbeat"}' });
  eq('stream skips what it has and heartbeats', got.map((e) => e.type), ['new', 'message.delta']);
  eq('stream remembers the last id', s.lastId, 6);
}

async function composer() {
  const ta = document.createElement('textarea');
  document.body.appendChild(ta);
  let sent = 0;
  let cancelled = 0;
  bindComposer(ta, { onSend: () => sent++, onCancel: () => cancelled++ });
  const key = (k, o = {}) => {
    const e = new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true, ...o });
    ta.dispatchEvent(e);
    return e.defaultPrevented;
  };
  ta.dispatchEvent(new CompositionEvent('compositionstart', { data: '' }));
  key('Enter', { isComposing: true });
  key('Enter');
  eq('Enter while composing does not send', sent, 0);
  ta.dispatchEvent(new CompositionEvent('compositionend', { data: '日本語' }));
  key('Enter'); // Safari: keydown after compositionend, same task
  eq('Enter that ends a composition does not send', sent, 0);
  await new Promise((r) => setTimeout(r, 10));
  const prevented = key('Enter');
  eq('Enter sends', [sent, prevented], [1, true]);
  const shift = key('Enter', { shiftKey: true });
  eq('Shift+Enter makes a new line', [sent, shift], [1, false]);
  key('Escape');
  eq('Esc cancels', cancelled, 1);
  ta.remove();
}

function trustedTypes() {
  let threw = false;
  try {
    document.createElement('div').innerHTML = '<b>x</b>';
  } catch (e) {
    threw = e instanceof TypeError;
  }
  check('the CSP makes an innerHTML assignment throw (Trusted Types)', threw, 'innerHTML was accepted');
}

function transcript() {
  const root = document.createElement('div');
  document.body.appendChild(root);
  const tr = new Transcript(root, {});
  const T = 't1';
  const evs = [
    { type: 'message.completed', sequence: 4, turnId: T, message: { role: 'user', content: 'fix <b>it</b>' } },
    { type: 'reasoning.delta', sequence: 0, turnId: T, step: 1, text: 'think' },
    { type: 'message.delta', sequence: 0, turnId: T, step: 1, text: 'I will ' },
    { type: 'message.delta', sequence: 0, turnId: T, step: 1, text: 'edit.' },
    { type: 'message.completed', sequence: 5, turnId: T, step: 1, message: { role: 'assistant', content: 'I will edit.', reasoning: 'think', tool_calls: [{ id: 'c1', name: 'edit_file', arguments: '{"path":"a.txt"}' }] } },
    { type: 'message.delta', sequence: 0, turnId: T, step: 1, text: 'late duplicate' },
    { type: 'tool.started', sequence: 6, turnId: T, toolCallId: 'c1', toolName: 'edit_file', summary: 'Edit a.txt', arguments: { path: 'a.txt' } },
    { type: 'tool.completed', sequence: 7, turnId: T, toolCallId: 'c1', toolName: 'edit_file', ok: true, summary: 'Edit a.txt', durationMs: 8, message: { role: 'tool', content: 'Edited a.txt\n\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-hello\n+<img src=x onerror=alert(1)>\n' } },
    { type: 'tool.started', sequence: 8, turnId: T, toolCallId: 'c2', toolName: 'run_command', summary: 'Run ls', arguments: { command: 'ls' } },
    { type: 'tool.output', sequence: 0, turnId: T, toolCallId: 'c2', toolName: 'run_command', text: '<script>x</script>\n' },
    { type: 'tool.completed', sequence: 9, turnId: T, toolCallId: 'c2', toolName: 'run_command', ok: false, summary: 'Run ls', message: { role: 'tool', content: 'boom', isError: true } },
    { type: 'turn.completed', sequence: 10, turnId: T },
  ];
  for (const ev of evs) tr.apply(ev);
  tr.flush();
  const before = root.innerHTML;
  // A replay of the same stored events (a reconnect that overlaps) and a
  // delta of a finished message change nothing.
  for (const ev of evs) tr.apply(ev);
  tr.flush();
  check('a replay adds nothing', root.innerHTML === before, 'the transcript changed on replay');
  eq('one user block, one answer, two tool cards', [root.querySelectorAll('.user').length, root.querySelectorAll('.assistant').length, root.querySelectorAll('.tool').length], [1, 1, 2]);
  check('the answer is the final text', root.querySelector('.assistant .md').textContent === 'I will edit.', root.querySelector('.assistant .md').textContent);
  check('reasoning is collapsed', root.querySelector('.assistant details.reasoning') && !root.querySelector('.assistant details.reasoning').open, 'no closed reasoning');
  const diff = root.querySelector('.tool[data-call="c1"] .diff');
  eq('the edit shows a coloured diff', diff && [diff.querySelectorAll('.add').length, diff.querySelectorAll('.del').length, diff.querySelectorAll('.hunk').length], [1, 1, 1]);
  const handlers = [...root.querySelectorAll('*')].flatMap((e) => [...e.attributes].filter((a) => a.name.startsWith('on')).map((a) => e.tagName + ' ' + a.name));
  check('tool and model strings stay text', !root.querySelector('img, script, iframe, b') && handlers.length === 0 && root.textContent.includes('fix <b>it</b>') && root.textContent.includes('+<img src=x onerror=alert(1)>'), handlers.join(', ') + ' ' + root.textContent);
  eq('a failed call says so', root.querySelector('.tool[data-call="c2"]').dataset.state, 'failed');
  root.remove();
}

// subagent feeds a subagent's events to the parent's transcript: they go
// under the task card, its approval to the dock, and its sequences never
// count as the parent's.
function subagent() {
  const root = document.createElement('div');
  document.body.appendChild(root);
  const approvals = [];
  const tr = new Transcript(root, { sessionId: 'p', onApproval: (kind, ev) => approvals.push(kind + ' ' + ev.sessionId + ' ' + ev.requestId) });
  const T = 't1';
  const sub = { sessionId: 'c', parentSessionId: 'p', parentToolCallId: 'k1', turnId: 'ct' };
  const evs = [
    { type: 'tool.started', sessionId: 'p', sequence: 6, turnId: T, toolCallId: 'k1', toolName: 'task', summary: 'general: bump it' },
    { ...sub, type: 'session.created', sequence: 1, session: { id: 'c', agent: 'general' } },
    { ...sub, type: 'tool.started', sequence: 40, toolCallId: 's1', toolName: 'read_file', summary: 'Read main.go' },
    { ...sub, type: 'tool.completed', sequence: 41, toolCallId: 's1', toolName: 'read_file', ok: true, summary: 'Read main.go' },
    { ...sub, type: 'permission.requested', sequence: 42, toolCallId: 's2', toolName: 'edit_file', summary: 'Edit main.go', requestId: 'r9' },
  ];
  for (const ev of evs) tr.apply(ev);
  eq('one card: the task, none of the subagent', [...root.querySelectorAll('.log > .tool, :scope > .tool')].map((c) => c.dataset.call), ['k1']);
  eq('the subagent under the task card', root.querySelector('.tool[data-call="k1"] .subagent .sub-head') && root.querySelector('.tool[data-call="k1"] .subagent .sub-head').textContent, '↳ general subagent');
  eq('its calls, with their state', [...root.querySelectorAll('.subagent .sub-call')].map((c) => c.dataset.state + ' ' + c.textContent.trim()), ['ok ✓ Read main.go', 'waiting ! Edit main.go']);
  eq('its approval goes to the dock', approvals, ['requested c r9']);
  eq("its sequences are not the parent's", tr.lastSeq, 6);
  tr.apply({ type: 'tool.completed', sessionId: 'p', sequence: 7, turnId: T, toolCallId: 'k1', toolName: 'task', ok: true, summary: 'general: bump it', message: { role: 'tool', content: 'done' } });
  eq("the parent's next event is applied", root.querySelector('.tool[data-call="k1"]').dataset.state, 'ok');
  root.remove();
}

async function dock() {
  const el = document.createElement('div');
  document.body.appendChild(el);
  const answers = [];
  const d = new ApprovalDock(el, { answer: async (item, body) => answers.push([item.id, body]) });
  d.add({ id: 'r1', toolName: 'run_command', summary: 'Run rm -rf build', arguments: { command: 'rm -rf build' } });
  d.add({ id: 'r2', toolName: 'edit_file', summary: 'Edit b', arguments: { path: 'b', old_string: 'x', new_string: 'y' } });
  const buttons = () => [...el.querySelectorAll('.approval-buttons button')];
  eq('five answers', buttons().map((b) => b.textContent), ['Allow once', 'Allow for this session', 'Always allow here', 'Deny', 'Deny with message…']);
  check('the oldest request is shown first, whole', el.querySelector('.cmd').textContent === '$ rm -rf build' && el.textContent.includes('1 of 2'), el.textContent);
  check('buttons ignore clicks at first', buttons().every((b) => b.disabled), 'a button was enabled at once');
  el.querySelector('[data-answer="Deny with message"]').click();
  await new Promise((r) => setTimeout(r, 700));
  check('then they work', buttons().every((b) => !b.disabled), 'still disabled');
  el.querySelector('.deny-message').value = 'use make clean';
  d.set([{ id: 'r1', toolName: 'run_command', summary: 'Run rm -rf build', arguments: { command: 'rm -rf build' } }, { id: 'r2', toolName: 'edit_file', summary: 'Edit b', arguments: { path: 'b', old_string: 'x', new_string: 'y' } }]);
  eq('a refresh keeps a half-typed denial', el.querySelector('.deny-message') && el.querySelector('.deny-message').value, 'use make clean');
  el.querySelector('.deny-with button').click();
  await new Promise((r) => setTimeout(r, 10));
  eq('deny with a message', answers[0], ['r1', { decision: 'deny', scope: 'once', message: 'use make clean' }]);
  check('the next request comes up, as a diff', el.querySelector('.diff .add') && el.textContent.includes('Edit b'), el.textContent);
  el.remove();

  // A list read before an event arrived does not undo the event.
  const d2 = new ApprovalDock(document.createElement('div'), { answer: async () => {} });
  d2.add({ id: 'new', toolName: 'run_command', arguments: { command: 'ls' }, seq: 10 });
  d2.set([], 5);
  eq('a stale list keeps a newer request', d2.count, 1);
  d2.set([], 12);
  eq('a fresh list drops it', d2.count, 0);
  d2.resolved('old');
  d2.set([{ id: 'old', toolName: 'run_command', arguments: { command: 'ls' } }], 1);
  eq('an answered request does not come back', d2.count, 0);
}

// longSession replays a long session (300 turns, 3,000 events), then
// streams deltas at its end: a delta must not cost more because the
// session is long. Both are compared with the same work on a short
// session in the same run (ratios, not times: the machine may be busy).
function longSession() {
  const replay = (turns) => {
    const root = document.createElement('div');
    root.className = 'log';
    document.body.appendChild(root);
    const tr = new Transcript(root, {});
    const evs = [];
    let seq = 0;
    const body = '## Step\n\nSome **text** with `code` and a list:\n\n- one\n- two\n\n```go\nfunc f() {}\n```\n';
    for (let i = 0; i < turns; i++) {
      const T = 'turn' + i;
      evs.push({ type: 'turn.started', sequence: ++seq, turnId: T });
      evs.push({ type: 'message.completed', sequence: ++seq, turnId: T, message: { role: 'user', content: 'request ' + i } });
      evs.push({ type: 'message.completed', sequence: ++seq, turnId: T, step: 1, message: { role: 'assistant', content: '', tool_calls: [{ id: 'c' + i, name: 'edit_file', arguments: '{"path":"f.go"}' }] } });
      evs.push({ type: 'tool.started', sequence: ++seq, turnId: T, step: 1, toolCallId: 'c' + i, toolName: 'edit_file', summary: 'Edit f.go' });
      evs.push({ type: 'tool.completed', sequence: ++seq, turnId: T, step: 1, toolCallId: 'c' + i, toolName: 'edit_file', ok: true, summary: 'Edit f.go', message: { role: 'tool', content: 'Edited\n\n--- a/f.go\n+++ b/f.go\n@@ -1 +1 @@\n-a\n+b\n' } });
      evs.push({ type: 'usage', sequence: ++seq, turnId: T, usage: { inputTokens: 100, outputTokens: 10 } });
      evs.push({ type: 'message.completed', sequence: ++seq, turnId: T, step: 2, message: { role: 'assistant', content: body } });
      evs.push({ type: 'usage', sequence: ++seq, turnId: T, usage: { inputTokens: 100, outputTokens: 10 } });
      evs.push({ type: 'session.updated', sequence: ++seq, turnId: T, status: 'idle' });
      evs.push({ type: 'turn.completed', sequence: ++seq, turnId: T });
    }
    const t0 = performance.now();
    for (const ev of evs) tr.apply(ev);
    void root.offsetHeight; // layout included
    return { root, tr, ms: performance.now() - t0 };
  };
  // The cheapest of three rounds of 50 deltas, per delta.
  const perDelta = (root, tr) => {
    let best = Infinity;
    for (let round = 0; round < 3; round++) {
      const t0 = performance.now();
      for (let k = 0; k < 50; k++) {
        tr.apply({ type: 'message.delta', sequence: 0, turnId: 'live' + round, step: 1, text: 'word ' + k + ' ' });
        tr.flush();
        void root.offsetHeight;
      }
      best = Math.min(best, (performance.now() - t0) / 50);
    }
    return best;
  };
  const short = replay(30);
  const shortDelta = perDelta(short.root, short.tr);
  const long = replay(300);
  const longDelta = perDelta(long.root, long.tr);
  short.root.remove();
  long.root.remove();
  // Ten times the events: linear is 10×; allow 25× for noise.
  const replayRatio = long.ms / Math.max(short.ms, 1);
  check('replaying 3,000 events took ' + Math.round(long.ms) + ' ms, ' + replayRatio.toFixed(1) + '× 300 events',
    replayRatio < 25, replayRatio);
  // The floor keeps a sub-millisecond short delta from making the ratio noise.
  const deltaRatio = longDelta / Math.max(shortDelta, 0.5);
  check('a delta at the end of a long session took ' + longDelta.toFixed(2) + ' ms, ' + deltaRatio.toFixed(1) +
    '× one in a short session (' + shortDelta.toFixed(2) + ' ms)', deltaRatio < 5, deltaRatio);
}

// reconnect follows /test/sse (browser_test.go): the first connection
// sends two events and ends, the second sends one event and a delta and
// then goes silent, the third is refused with 401. The stream must
// reconnect after the end and after the silence, asking for what it has
// not got, and stop at "signed out".
async function reconnect() {
  const events = [];
  const states = [];
  await new Promise((resolve) => {
    const s = new EventStream('/test/sse', {
      silenceMs: 800,
      onEvent: (e) => events.push(e.type + ':' + e.sequence),
      onState: (st) => {
        if (states[states.length - 1] !== st) states.push(st);
        if (st === 'signed-out') resolve();
      },
    });
    s.start();
    setTimeout(() => {
      s.stop();
      resolve();
    }, 15000);
  });
  eq('events across reconnects, none twice', events, ['a:1', 'b:2', 'c:3', 'message.delta:0']);
  eq('connection states', states, ['connecting', 'live', 'reconnecting', 'live', 'reconnecting', 'signed-out']);
}

// queueEvents follows the queued messages from their events: ids from
// input.queued (removable at once), input.edited and input.removed change
// the list, input.returned empties it and puts the text back into the
// input box, before what is being typed — but only for what happened
// while the page was open, not for the history the stream replays.
async function queueEvents() {
  const root = document.createElement('div');
  document.body.appendChild(root);
  const app = { models: () => [], mode: () => 'default', onTitle() {}, onApprovals() {}, toggleSidebar() {}, signedOut() {}, setMode: async () => {} };
  const v = new SessionView(root, 'no-such-session', app);
  const apply = (ev) => v.transcript.apply(ev);
  const q = (id, content) => ({ id, sessionId: 'no-such-session', content });
  const shown = () => [...root.querySelectorAll('.queue .queued')].map((e) => e.dataset.input + ':' + e.querySelector('.text').textContent + (e.querySelector('.remove').disabled ? ' (fixed)' : ''));
  apply({ type: 'input.queued', sequence: 1, text: 'old', queued: [q(1, 'old')] });
  apply({ type: 'input.returned', sequence: 2, text: '1 queued message(s) not sent', queued: [q(1, 'old')] });
  apply({ type: 'stream.ready', sequence: 2 });
  eq('the replayed history gives nothing back', [v.input.value, shown()], ['', []]);
  apply({ type: 'input.queued', sequence: 3, text: 'first', queued: [q(5, 'first')] });
  apply({ type: 'input.queued', sequence: 4, text: 'second', queued: [q(6, 'second')] });
  eq('queued messages are listed with their ids, removable', shown(), ['5:first', '6:second']);
  apply({ type: 'input.edited', sequence: 5, queued: [q(6, 'second, edited')] });
  eq('an edit elsewhere changes the entry in place', shown(), ['5:first', '6:second, edited']);
  apply({ type: 'input.removed', sequence: 6, queued: [q(5, 'first')] });
  eq('a removal elsewhere takes the entry out', shown(), ['6:second, edited']);
  v.input.value = 'half typed';
  apply({ type: 'input.returned', sequence: 7, text: '1 queued message(s) not sent', queued: [q(6, 'second, edited')] });
  eq('a returned message is back in the input box, before what was typed', v.input.value, 'second, edited\n\nhalf typed');
  check('the queue is empty and hidden', shown().length === 0 && root.querySelector('.queue').hidden, shown().join(', '));
  check('the page says so', /back in the input box/.test(root.querySelector('.hint').textContent), root.querySelector('.hint').textContent);
  v.destroy();
  root.remove();
}

// modules loads every module of the page but app.js, which would start
// the page (the end-to-end test loads that one).
async function modules() {
  for (const m of ['dom', 'api', 'format', 'markdown', 'stream', 'composer', 'transcript', 'approvals', 'session', 'settings', 'subagents']) {
    try {
      await import('/' + m + '.js');
      check('module ' + m + ' loads', true);
    } catch (e) {
      check('module ' + m + ' loads', false, e);
    }
  }
}

export async function run() {
  const steps = [modules, markdownSafety, markdownStructure, streaming, sseParser, composer, trustedTypes, transcript, subagent, dock, queueEvents, longSession, reconnect];
  for (const s of steps) {
    try {
      await s();
    } catch (e) {
      check(s.name + ' threw', false, e && e.stack ? e.stack : e);
    }
  }
  return results;
}
