// attachments.js: images attached to the next message, from the file
// picker or pasted into the message box. Each is shown as a thumbnail
// with a button that removes it, and goes with the message as base64 data
// (POST /api/sessions/{id}/messages "images"); the server checks them,
// scales big ones down, and refuses them for a model that does not read
// images (the message stays in the box, with the reason).

import { h, clear } from './dom.js';

// The server's limits (app.MaxPromptImages, app.MaxPromptImageBytes).
export const MAX_IMAGES = 4;
export const MAX_IMAGE_BYTES = 8 << 20;

const TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

export class Attachments {
  // onError(message) hears why a file was not attached.
  constructor({ onError }) {
    this.onError = onError || (() => {});
    this.items = []; // {name, dataURL}
    this.el = h('div', { class: 'attachments', hidden: true });
    this.picker = h('input', { type: 'file', accept: TYPES.join(','), multiple: true, hidden: true, class: 'image-picker' });
    this.picker.addEventListener('change', () => {
      this.addFiles([...this.picker.files]);
      this.picker.value = '';
    });
    this.button = h('button', { type: 'button', class: 'btn attach', title: 'Attach images (or paste one into the message box)', 'aria-label': 'Attach images' }, '+ Image');
    this.button.addEventListener('click', () => this.picker.click());
  }

  // bindPaste attaches the images pasted into ta (text pastes as usual).
  bindPaste(ta) {
    ta.addEventListener('paste', (e) => {
      const files = [...(e.clipboardData ? e.clipboardData.items : [])].filter((i) => i.kind === 'file' && i.type.startsWith('image/')).map((i) => i.getAsFile()).filter(Boolean);
      if (!files.length) return;
      e.preventDefault();
      this.addFiles(files);
    });
  }

  async addFiles(files) {
    for (const f of files) {
      if (this.items.length >= MAX_IMAGES) {
        this.onError('At most ' + MAX_IMAGES + ' images go with one message.');
        return;
      }
      const name = f.name || 'pasted-image';
      if (!TYPES.includes(f.type)) {
        this.onError(name + ' is not a PNG, JPEG, GIF or WebP image.');
        continue;
      }
      if (f.size > MAX_IMAGE_BYTES) {
        this.onError(name + ' is larger than ' + (MAX_IMAGE_BYTES >> 20) + ' MiB.');
        continue;
      }
      try {
        this.items.push({ name, dataURL: await readDataURL(f) });
      } catch (e) {
        this.onError('Cannot read ' + name + ': ' + e.message);
      }
    }
    this.render();
  }

  get count() {
    return this.items.length;
  }

  // body returns the images as the messages route takes them.
  body() {
    return this.items.map((x) => ({ name: x.name, data: x.dataURL.slice(x.dataURL.indexOf(',') + 1) }));
  }

  clear() {
    this.items = [];
    this.render();
  }

  render() {
    clear(this.el);
    this.el.hidden = this.items.length === 0;
    this.items.forEach((x, i) => {
      const rm = h('button', { type: 'button', class: 'icon-btn remove', 'aria-label': 'Remove ' + x.name, title: 'Remove' }, '×');
      rm.addEventListener('click', () => {
        this.items.splice(i, 1);
        this.render();
      });
      this.el.appendChild(h('div', { class: 'attachment', title: x.name }, h('img', { src: x.dataURL, alt: x.name }), h('span', { class: 'name' }, x.name), rm));
    });
  }
}

function readDataURL(file) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result));
    r.onerror = () => reject(r.error || new Error('read failed'));
    r.readAsDataURL(file);
  });
}
