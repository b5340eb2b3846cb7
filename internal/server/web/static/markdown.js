// markdown.js: a small Markdown renderer for the model's answers.
//
// It is written for this panel instead of vendoring a library because what
// the panel needs is narrow and the safety property is easiest to keep in
// a few hundred lines: it never produces markup. It parses the common
// subset models write (CommonMark blocks: paragraphs, ATX and setext
// headings, fenced and indented code, block quotes, nested lists, rules;
// GFM tables, task items, strikethrough and bare URLs; inline code,
// emphasis, links) and builds DOM nodes with text nodes for all text. Raw
// HTML in the source is shown as text. Links keep only http, https and
// mailto targets and open in a new tab without a referrer; images are not
// loaded, only linked.
//
// StreamingMarkdown renders a message while it arrives: the part up to
// the last finished block is rendered once and kept, and only the
// unfinished tail is rendered again on each update, so a long answer does
// not cost more per delta as it grows.

import { h } from './dom.js';

// Searches for closing delimiters look this far at most, so that
// pathological input (thousands of unmatched "*") stays linear.
const SEARCH_LIMIT = 4000;

const FENCE = /^( {0,3})(`{3,}|~{3,})[ \t]*([^`]*?)[ \t]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?/;
const LIST_ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])([ \t]+|$)(.*)$/;
const SETEXT1 = /^ {0,3}=+[ \t]*$/;
const SETEXT2 = /^ {0,3}-+[ \t]*$/;
const TABLE_SEP = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;
const BLANK = /^[ \t]*$/;
const PUNCT = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';

// render returns the rendered source as a DocumentFragment.
export function render(src) {
  const frag = document.createDocumentFragment();
  const lines = String(src).replace(/\r\n?/g, '\n').split('\n');
  renderBlocks(parseBlocks(lines), frag);
  return frag;
}

// StreamingMarkdown shows a growing Markdown text in el.
export class StreamingMarkdown {
  constructor(el) {
    this.el = el;
    this.stable = h('div', { class: 'md-part' });
    this.tail = h('div', { class: 'md-part' });
    el.append(this.stable, this.tail);
    this.stableLen = 0;
  }

  // update shows text, which must start with the text of the previous
  // update.
  update(text) {
    const cut = stableCut(text, this.stableLen);
    if (cut > this.stableLen) {
      this.stable.appendChild(render(text.slice(this.stableLen, cut)));
      this.stableLen = cut;
    }
    // A delimiter at the very end has not met its partner yet ("**" of
    // "**bold"); showing it would flicker, so it waits for the next piece.
    this.tail.replaceChildren(render(text.slice(this.stableLen).replace(/[*_~`]+$/, '')));
  }

  // finish shows the complete text, rendered as one document.
  finish(text) {
    this.el.replaceChildren(render(text));
  }
}

// stableCut returns the offset after the last blank line of text (from
// offset from on) after which everything before is final: the blank line
// is outside a code fence, and the line after it is complete and starts a
// new top-level block that cannot continue the one before (not indented,
// not a list item, which could continue a loose list).
export function stableCut(text, from = 0) {
  let cut = from;
  let fence = null;
  let pos = 0;
  let prevBlank = false;
  let inPrefix = true;
  for (;;) {
    const nl = text.indexOf('\n', pos);
    if (nl < 0) break; // the last line is incomplete
    const line = text.slice(pos, nl);
    if (fence) {
      const m = FENCE.exec(line);
      if (m && m[2][0] === fence[0] && m[2].length >= fence.length && m[3] === '') fence = null;
    } else {
      if (prevBlank && pos > from && !inPrefix && !BLANK.test(line) && !/^[ \t]/.test(line) && !LIST_ITEM.test(line)) {
        cut = pos;
      }
      const m = FENCE.exec(line);
      if (m) fence = m[2];
    }
    if (!BLANK.test(line)) inPrefix = false;
    prevBlank = !fence && BLANK.test(line);
    pos = nl + 1;
  }
  return cut;
}

// ---- blocks ----

function parseBlocks(lines) {
  const out = [];
  let i = 0;
  const n = lines.length;
  while (i < n) {
    const line = lines[i];
    if (BLANK.test(line)) {
      i++;
      continue;
    }
    let m;
    if ((m = FENCE.exec(line)) && !(m[2][0] === '`' && m[3].includes('`'))) {
      const indent = m[1].length;
      const fence = m[2];
      const body = [];
      i++;
      while (i < n) {
        const c = FENCE.exec(lines[i]);
        if (c && c[2][0] === fence[0] && c[2].length >= fence.length && c[3] === '') {
          i++;
          break;
        }
        body.push(stripIndent(lines[i], indent));
        i++;
      }
      out.push({ t: 'code', lang: m[3].split(/\s+/)[0] || '', text: body.join('\n') });
      continue;
    }
    if ((m = HEADING.exec(line))) {
      out.push({ t: 'heading', level: m[1].length, text: m[2] || '' });
      i++;
      continue;
    }
    if (HR.test(line)) {
      out.push({ t: 'hr' });
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body = [];
      while (i < n && !BLANK.test(lines[i])) {
        if (QUOTE.test(lines[i])) body.push(lines[i].replace(QUOTE, ''));
        else if (startsBlock(lines[i])) break;
        else body.push(lines[i]);
        i++;
      }
      out.push({ t: 'quote', children: parseBlocks(body) });
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const r = parseList(lines, i);
      out.push(r.node);
      i = r.next;
      continue;
    }
    if (/^( {4}|\t)/.test(line)) {
      const body = [];
      while (i < n && (/^( {4}|\t)/.test(lines[i]) || BLANK.test(lines[i]))) {
        body.push(lines[i].replace(/^( {4}|\t)/, ''));
        i++;
      }
      while (body.length && BLANK.test(body[body.length - 1])) body.pop();
      out.push({ t: 'code', lang: '', text: body.join('\n') });
      continue;
    }
    if (line.includes('|') && i + 1 < n && TABLE_SEP.test(lines[i + 1]) && lines[i + 1].includes('-')) {
      const head = cells(line);
      const align = cells(lines[i + 1]).map((c) => {
        const l = c.startsWith(':');
        const r = c.endsWith(':');
        return l && r ? 'center' : r ? 'right' : l ? 'left' : '';
      });
      const rows = [];
      i += 2;
      while (i < n && !BLANK.test(lines[i]) && lines[i].includes('|')) {
        rows.push(cells(lines[i]));
        i++;
      }
      out.push({ t: 'table', head, align, rows });
      continue;
    }
    // A paragraph, possibly a setext heading.
    const body = [line];
    i++;
    let heading = 0;
    while (i < n && !BLANK.test(lines[i])) {
      if (SETEXT1.test(lines[i])) {
        heading = 1;
        i++;
        break;
      }
      if (SETEXT2.test(lines[i])) {
        heading = 2;
        i++;
        break;
      }
      if (startsBlock(lines[i])) break;
      body.push(lines[i]);
      i++;
    }
    const text = body.map((l) => l.replace(/^[ \t]+/, '')).join('\n');
    out.push(heading ? { t: 'heading', level: heading, text } : { t: 'para', text });
  }
  return out;
}

// startsBlock reports whether a line interrupts a paragraph.
function startsBlock(line) {
  if (FENCE.test(line) || HEADING.test(line) || HR.test(line) || QUOTE.test(line)) return true;
  const m = LIST_ITEM.exec(line);
  // Only a bullet or a list starting at 1 interrupts a paragraph, and
  // never an empty item (CommonMark).
  return !!(m && m[4].trim() !== '' && (!/\d/.test(m[2]) || /^1[.)]$/.test(m[2])));
}

function parseList(lines, i) {
  const first = LIST_ITEM.exec(lines[i]);
  const ordered = /\d/.test(first[2]);
  const kind = ordered ? first[2].slice(-1) : first[2];
  const node = { t: 'list', ordered, start: ordered ? parseInt(first[2], 10) : 1, items: [], loose: false };
  const n = lines.length;
  while (i < n) {
    const m = LIST_ITEM.exec(lines[i]);
    if (!m) break;
    const mk = /\d/.test(m[2]) ? m[2].slice(-1) : m[2];
    if (/\d/.test(m[2]) !== ordered || mk !== kind) break;
    const spaces = m[3].length;
    const contentIndent = m[1].length + m[2].length + (spaces > 4 || spaces === 0 ? 1 : spaces);
    const body = [m[4]];
    i++;
    let sawBlank = false;
    while (i < n) {
      const line = lines[i];
      if (BLANK.test(line)) {
        // A blank line continues the item only if something indented to
        // its content follows.
        let j = i + 1;
        while (j < n && BLANK.test(lines[j])) j++;
        if (j < n && indentOf(lines[j]) >= contentIndent) {
          for (; i < j; i++) body.push('');
          sawBlank = true;
          continue;
        }
        break;
      }
      if (indentOf(line) >= contentIndent) {
        body.push(stripIndent(line, contentIndent));
        i++;
        continue;
      }
      if (LIST_ITEM.test(line) || startsBlock(line)) break;
      body.push(line); // lazy continuation
      i++;
    }
    let task = null;
    const tm = /^\[([ xX])\][ \t]+/.exec(body[0]);
    if (tm) {
      task = tm[1] !== ' ';
      body[0] = body[0].slice(tm[0].length);
    }
    const children = parseBlocks(body);
    if (sawBlank && children.length > 1) node.loose = true;
    node.items.push({ children, task });
    // Blank lines between items make the list loose.
    let j = i;
    while (j < n && BLANK.test(lines[j])) j++;
    if (j < n && j > i) {
      const next = LIST_ITEM.exec(lines[j]);
      if (next && /\d/.test(next[2]) === ordered && (/\d/.test(next[2]) ? next[2].slice(-1) : next[2]) === kind && next[1].length <= first[1].length + 1) {
        node.loose = true;
        i = j;
        continue;
      }
      break;
    }
  }
  return { node, next: i };
}

function indentOf(line) {
  let n = 0;
  for (const c of line) {
    if (c === ' ') n++;
    else if (c === '\t') n += 4 - (n % 4);
    else break;
  }
  return n;
}

function stripIndent(line, k) {
  let i = 0;
  let n = 0;
  while (i < line.length && n < k && (line[i] === ' ' || line[i] === '\t')) {
    n += line[i] === '\t' ? 4 - (n % 4) : 1;
    i++;
  }
  return line.slice(i);
}

function cells(line) {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const out = [];
  let cur = '';
  let code = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && s[i + 1] === '|') {
      cur += '|';
      i++;
    } else if (c === '`') {
      code ^= 1;
      cur += c;
    } else if (c === '|' && !code) {
      out.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  out.push(cur.trim());
  return out;
}

function renderBlocks(blocks, parent, tight = false) {
  for (const b of blocks) {
    switch (b.t) {
      case 'para':
        if (tight) inline(b.text, parent);
        else parent.appendChild(inline(b.text, h('p')));
        break;
      case 'heading':
        parent.appendChild(inline(b.text, h('h' + b.level)));
        break;
      case 'hr':
        parent.appendChild(h('hr'));
        break;
      case 'code':
        parent.appendChild(codeBlock(b.text, b.lang));
        break;
      case 'quote': {
        const q = h('blockquote');
        renderBlocks(b.children, q);
        parent.appendChild(q);
        break;
      }
      case 'list': {
        const l = h(b.ordered ? 'ol' : 'ul', b.ordered && b.start !== 1 ? { start: b.start } : null);
        for (const it of b.items) {
          const li = h('li', it.task === null ? null : { class: 'task' });
          if (it.task !== null) li.appendChild(h('input', { type: 'checkbox', checked: it.task, disabled: true }));
          renderBlocks(it.children, li, !b.loose);
          l.appendChild(li);
        }
        parent.appendChild(l);
        break;
      }
      case 'table': {
        const wrap = h('div', { class: 'table-wrap' });
        const t = h('table');
        const tr = h('tr');
        b.head.forEach((c, k) => tr.appendChild(inline(c, h('th', b.align[k] ? { class: 'al-' + b.align[k] } : null))));
        t.appendChild(h('thead', null, tr));
        const tb = h('tbody');
        for (const row of b.rows) {
          const r = h('tr');
          for (let k = 0; k < b.head.length; k++) {
            r.appendChild(inline(row[k] || '', h('td', b.align[k] ? { class: 'al-' + b.align[k] } : null)));
          }
          tb.appendChild(r);
        }
        t.appendChild(tb);
        wrap.appendChild(t);
        parent.appendChild(wrap);
        break;
      }
    }
  }
}

// codeBlock renders a fenced block with a copy button.
export function codeBlock(text, lang) {
  const code = h('code', lang ? { class: 'lang-' + lang.replace(/[^\w+-]/g, '') } : null, text);
  const copy = h('button', { class: 'copy', type: 'button', title: 'Copy', 'aria-label': 'Copy code' }, 'Copy');
  copy.addEventListener('click', () => {
    if (navigator.clipboard) {
      navigator.clipboard.writeText(text).then(
        () => flash(copy, 'Copied'),
        () => flash(copy, 'Failed'),
      );
    }
  });
  return h('div', { class: 'code' }, lang ? h('span', { class: 'lang' }, lang) : null, copy, h('pre', null, code));
}

function flash(btn, label) {
  btn.textContent = label;
  setTimeout(() => (btn.textContent = 'Copy'), 1200);
}

// ---- inlines ----

// safeHref returns url if it may be a link target, else null.
export function safeHref(url) {
  const u = String(url).trim();
  // Browsers ignore control characters and whitespace inside a scheme
  // ("java\tscript:"); judge the URL as they would.
  const squeezed = u.replace(/[\u0000-\u0020\u007f-\u009f]/g, '');
  if (/^(https?:\/\/|mailto:)/i.test(squeezed) && squeezed === u.replace(/\s/g, '')) return u;
  return null;
}

function link(href, label) {
  const safe = safeHref(href);
  if (!safe) return h('span', { class: 'link-off', title: 'link not followed: ' + String(href).slice(0, 200) }, label);
  return h('a', { href: safe, target: '_blank', rel: 'noopener noreferrer nofollow' }, label);
}

// inline parses s as inline Markdown into parent and returns parent.
export function inline(s, parent) {
  let i = 0;
  let start = 0;
  let nextClose = -1; // the first "]" at or after i, found once per run
  const n = s.length;
  const flush = (end) => {
    if (end > start) parent.appendChild(document.createTextNode(s.slice(start, end)));
  };
  while (i < n) {
    const c = s[i];
    if (c === '\\' && i + 1 < n) {
      if (s[i + 1] === '\n') {
        flush(i);
        parent.appendChild(h('br'));
        i += 2;
        start = i;
        continue;
      }
      if (PUNCT.includes(s[i + 1])) {
        flush(i);
        parent.appendChild(document.createTextNode(s[i + 1]));
        i += 2;
        start = i;
        continue;
      }
    }
    if (c === '`') {
      let r = 1;
      while (s[i + r] === '`') r++;
      const ticks = '`'.repeat(r);
      let j = i + r;
      let close = -1;
      while (j < n && j - i < SEARCH_LIMIT) {
        const k = s.indexOf(ticks, j);
        if (k < 0 || k - i > SEARCH_LIMIT) break;
        if (s[k + r] !== '`' && s[k - 1] !== '`') {
          close = k;
          break;
        }
        j = k + r;
        while (s[j] === '`') j++;
      }
      if (close >= 0) {
        flush(i);
        let code = s.slice(i + r, close).replace(/\n/g, ' ');
        if (code.length > 2 && code.startsWith(' ') && code.endsWith(' ') && code.trim() !== '') code = code.slice(1, -1);
        parent.appendChild(h('code', null, code));
        i = close + r;
        start = i;
        continue;
      }
      i += r;
      continue;
    }
    if (c === '[' || (c === '!' && s[i + 1] === '[')) {
      const img = c === '!';
      if (nextClose !== -2 && nextClose < i) nextClose = s.indexOf(']', i);
      if (nextClose < 0) nextClose = -2; // none left: no link can start
      const l = nextClose >= 0 && nextClose - i < SEARCH_LIMIT ? parseLink(s, img ? i + 1 : i) : null;
      if (l) {
        flush(i);
        if (img) {
          parent.appendChild(link(l.href, '[image: ' + (l.label || l.href) + ']'));
        } else {
          const a = link(l.href, '');
          inline(l.label, a);
          parent.appendChild(a);
        }
        i = l.end;
        start = i;
        continue;
      }
    }
    if (c === '<') {
      const m = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i.exec(s.slice(i, i + 2048));
      if (m) {
        flush(i);
        parent.appendChild(link(m[1], m[1]));
        i += m[0].length;
        start = i;
        continue;
      }
    }
    if ((c === 'h' || c === 'H') && (i === 0 || !/[\w/]/.test(s[i - 1]))) {
      const m = /^https?:\/\/[^\s<>"`]+/i.exec(s.slice(i, i + 2048));
      if (m) {
        let url = m[0];
        // Trailing punctuation ends the sentence, not the URL; a closing
        // parenthesis belongs to the URL only if it opened one.
        for (;;) {
          const last = url[url.length - 1];
          if ('.,;:!?*_~\'"'.includes(last)) url = url.slice(0, -1);
          else if (last === ')' && count(url, '(') < count(url, ')')) url = url.slice(0, -1);
          else break;
        }
        flush(i);
        parent.appendChild(link(url, url));
        i += url.length;
        start = i;
        continue;
      }
    }
    if (c === '*' || c === '_' || c === '~') {
      const e = parseEmphasis(s, i);
      if (e) {
        flush(i);
        let el = h(e.tag);
        inline(e.inner, el);
        if (e.tag2) el = h(e.tag2, null, el);
        parent.appendChild(el);
        i = e.end;
        start = i;
        continue;
      }
      let r = 1;
      while (s[i + r] === c) r++;
      i += r;
      continue;
    }
    if (c === '\n') {
      // Two spaces before a line end make a hard break.
      if (i >= 2 && s[i - 1] === ' ' && s[i - 2] === ' ') {
        let k = i;
        while (k > start && s[k - 1] === ' ') k--;
        flush(k);
        parent.appendChild(h('br'));
        i++;
        start = i;
        continue;
      }
    }
    i++;
  }
  flush(n);
  return parent;
}

function count(s, ch) {
  let k = 0;
  for (const c of s) if (c === ch) k++;
  return k;
}

// parseLink parses "[label](href "title")" at s[i] === '['.
function parseLink(s, i) {
  let depth = 0;
  let j = i;
  const limit = Math.min(s.length, i + SEARCH_LIMIT);
  for (; j < limit; j++) {
    const c = s[j];
    if (c === '\\') {
      j++;
      continue;
    }
    if (c === '`') {
      const k = s.indexOf('`', j + 1);
      if (k > 0 && k < limit) j = k;
      continue;
    }
    if (c === '[') depth++;
    else if (c === ']') {
      depth--;
      if (depth === 0) break;
    }
  }
  if (j >= limit || s[j + 1] !== '(') return null;
  const label = s.slice(i + 1, j);
  let k = j + 2;
  while (s[k] === ' ') k++;
  let href = '';
  if (s[k] === '<') {
    const e = s.indexOf('>', k);
    if (e < 0) return null;
    href = s.slice(k + 1, e);
    k = e + 1;
  } else {
    let par = 0;
    const b = k;
    for (; k < limit; k++) {
      const c = s[k];
      if (c === '\\') {
        k++;
        continue;
      }
      if (c === ' ' || c === '\n') break;
      if (c === '(') par++;
      else if (c === ')') {
        if (par === 0) break;
        par--;
      }
    }
    href = s.slice(b, k);
  }
  while (s[k] === ' ' || s[k] === '\n') k++;
  if (s[k] === '"' || s[k] === "'") {
    const q = s[k];
    const e = s.indexOf(q, k + 1);
    if (e < 0) return null;
    k = e + 1;
    while (s[k] === ' ') k++;
  }
  if (s[k] !== ')') return null;
  return { label, href: href.replace(/\\([!-/:-@[-`{-~])/g, '$1'), end: k + 1 };
}

// parseEmphasis parses *em*, **strong**, ***both***, _em_, __strong__ and
// ~~del~~ starting at s[i].
function parseEmphasis(s, i) {
  const c = s[i];
  let r = 1;
  while (s[i + r] === c) r++;
  if (c === '~' && r !== 2) return null;
  if (r > 3) return null;
  const after = s[i + r];
  if (after === undefined || /\s/.test(after)) return null;
  if (c === '_' && i > 0 && /[\p{L}\p{N}]/u.test(s[i - 1])) return null;
  const delim = c.repeat(r);
  let j = i + r + 1;
  const limit = Math.min(s.length, i + SEARCH_LIMIT);
  while (j < limit) {
    const k = s.indexOf(delim, j);
    if (k < 0 || k >= limit) return null;
    const before = s[k - 1];
    const next = s[k + r];
    const ok =
      !/\s/.test(before) &&
      next !== c &&
      s[k - 1] !== c &&
      (c !== '_' || next === undefined || !/[\p{L}\p{N}]/u.test(next));
    if (ok && !insideCode(s, i + r, k)) {
      const inner = s.slice(i + r, k);
      if (c === '~') return { tag: 'del', inner, end: k + r };
      if (r === 1) return { tag: 'em', inner, end: k + r };
      if (r === 2) return { tag: 'strong', inner, end: k + r };
      return { tag: 'em', tag2: 'strong', inner, end: k + r };
    }
    j = k + 1;
  }
  return null;
}

// insideCode reports whether position k of s is inside a code span that
// starts at or after from (an odd number of backticks between them).
function insideCode(s, from, k) {
  let n = 0;
  for (let i = from; i < k; i++) if (s[i] === '`') n++;
  return n % 2 === 1;
}
