// dom.js: the only way the panel builds elements. Text always goes in as
// text nodes, never as markup, so a model's or a tool's string cannot
// become HTML. (The page's CSP also requires Trusted Types, so an
// innerHTML assignment anywhere would throw.)

// h builds an element: h('div', {class: 'x', onclick: fn, title: 't'},
// 'text', child, [more]). Props starting with "on" add listeners; class,
// text and dataset are special; other props become attributes (false and
// null drop them).
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = v;
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (k === 'value') el.value = v;
      else if (k === 'checked' || k === 'disabled' || k === 'selected' || k === 'open' || k === 'hidden') el[k] = !!v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

// append adds children (strings become text nodes; arrays are flattened;
// null and false are skipped).
export function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
  return el;
}

// clear removes every child of el.
export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

// $ finds one element by selector (in root, default the document).
export function $(sel, root = document) {
  return root.querySelector(sel);
}
