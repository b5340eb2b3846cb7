// stream.js: one session's event stream (GET /api/sessions/{id}/events),
// read with fetch rather than EventSource so that the panel
//   - knows the connection is alive from every byte, heartbeats included
//     (a dead socket that never errors must not look like a quiet one);
//   - gives up on a stream silent for longer than three heartbeats and
//     reconnects, instead of showing "running" forever;
//   - reconnects after any end or error, with backoff, and asks for the
//     events after the last one it applied (Last-Event-ID and ?after=N),
//     so nothing is missed and nothing is shown twice;
//   - can tell "signed out" (401) and "no such session" (404) from a
//     network failure, which EventSource cannot.

// The server sends a heartbeat every 15 s; three missed ones mean the
// connection is dead even if the socket says otherwise.
const SILENCE_MS = 45000;
const MAX_BACKOFF_MS = 15000;

// States reported to onState.
export const CONNECTING = 'connecting';
export const LIVE = 'live';
export const RECONNECTING = 'reconnecting';
export const SIGNED_OUT = 'signed-out';
export const GONE = 'gone';
export const CLOSED = 'closed';

export class EventStream {
  // url is the stream's URL without a query; after is the last sequence
  // already applied; onEvent(ev) gets each event in order; onState(state,
  // info) hears of every change of connection state; silenceMs is how
  // long a connection may stay silent before it counts as dead.
  constructor(url, { after = 0, onEvent, onState, silenceMs = SILENCE_MS }) {
    this.url = url;
    this.silenceMs = silenceMs;
    this.lastId = after;
    this.onEvent = onEvent;
    this.onState = onState;
    this.stopped = false;
    this.attempt = 0;
    this.ctrl = null;
    this.wake = null;
    this.state = '';
    this.kick = () => {
      // The browser came back online or the tab became visible: retry at
      // once instead of waiting out the backoff.
      if (this.wake) this.wake();
    };
  }

  start() {
    window.addEventListener('online', this.kick);
    document.addEventListener('visibilitychange', this.kick);
    this.run();
    return this;
  }

  stop() {
    this.stopped = true;
    window.removeEventListener('online', this.kick);
    document.removeEventListener('visibilitychange', this.kick);
    if (this.ctrl) this.ctrl.abort();
    if (this.wake) this.wake();
    this.setState(CLOSED);
  }

  setState(state, info = {}) {
    this.state = state;
    if (this.onState) this.onState(state, info);
  }

  async run() {
    while (!this.stopped) {
      this.setState(this.attempt === 0 ? CONNECTING : RECONNECTING, { attempt: this.attempt });
      let outcome;
      try {
        outcome = await this.connectOnce();
      } catch (e) {
        outcome = { error: e.message || String(e) };
      }
      if (this.stopped) return;
      if (outcome.status === 401) {
        this.stopped = true;
        this.setState(SIGNED_OUT);
        return;
      }
      if (outcome.status === 404) {
        this.stopped = true;
        this.setState(GONE);
        return;
      }
      this.attempt++;
      const base = Math.min(MAX_BACKOFF_MS, 500 * 2 ** Math.min(this.attempt - 1, 6));
      const delay = outcome.wasLive && this.attempt === 1 ? 200 : Math.round(base * (0.5 + Math.random() / 2));
      this.setState(RECONNECTING, { attempt: this.attempt, delay, error: outcome.error || '' });
      await new Promise((resolve) => {
        const t = setTimeout(resolve, delay);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  // connectOnce reads one connection to its end and reports how it ended.
  async connectOnce() {
    const ctrl = new AbortController();
    this.ctrl = ctrl;
    const sep = this.url.includes('?') ? '&' : '?';
    const res = await fetch(this.url + sep + 'after=' + this.lastId, {
      credentials: 'same-origin',
      cache: 'no-store',
      headers: { Accept: 'text/event-stream', 'Last-Event-ID': String(this.lastId) },
      signal: ctrl.signal,
    });
    if (!res.ok || !res.body) {
      return { status: res.status, error: 'HTTP ' + res.status };
    }
    this.attempt = 0;
    this.setState(LIVE);
    let lastByte = Date.now();
    const watchdog = setInterval(() => {
      if (Date.now() - lastByte > this.silenceMs) ctrl.abort();
    }, Math.min(5000, this.silenceMs / 4));
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    const parser = new Parser((ev) => this.dispatch(ev));
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        lastByte = Date.now();
        parser.push(value);
      }
      return { wasLive: true, error: 'the stream ended' };
    } catch (e) {
      const silent = Date.now() - lastByte > this.silenceMs;
      return { wasLive: true, error: silent ? 'no heartbeat for ' + Math.round(this.silenceMs / 1000) + ' s' : e.message || String(e) };
    } finally {
      clearInterval(watchdog);
    }
  }

  dispatch(raw) {
    let ev;
    try {
      ev = JSON.parse(raw.data);
    } catch {
      return;
    }
    if (raw.id && /^\d+$/.test(raw.id)) {
      const id = Number(raw.id);
      if (id <= this.lastId) return; // already applied: a replay overlap
      this.lastId = id;
    }
    if (!ev.type && raw.event) ev.type = raw.event;
    if (ev.type === 'stream.heartbeat') return; // it did its job: a byte arrived
    this.onEvent(ev);
  }
}

// Parser splits text/event-stream text into events as the WHATWG
// standard's parsing rules say: lines end in CRLF, LF or CR; "data" lines
// join with "\n"; a blank line dispatches; lines starting with ":" are
// comments.
export class Parser {
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.buf = '';
    this.data = [];
    this.event = '';
    this.id = '';
    this.ownId = false;
    this.sawCR = false;
  }

  push(text) {
    let s = text;
    if (this.sawCR && s.startsWith('\n')) s = s.slice(1);
    this.sawCR = false;
    this.buf += s;
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buf);
      if (!m) break;
      if (m[0] === '\r' && m.index === this.buf.length - 1) {
        // A CR at the end of a chunk may be the first half of a CRLF.
        this.sawCR = true;
      }
      const line = this.buf.slice(0, m.index);
      this.buf = this.buf.slice(m.index + m[0].length);
      this.line(line);
    }
  }

  line(line) {
    if (line === '') {
      // Only an event's own "id:" line marks it as stored; a delta sent
      // without one must not inherit the previous event's id.
      if (this.data.length) this.onEvent({ event: this.event, data: this.data.join('\n'), id: this.ownId ? this.id : '' });
      this.data = [];
      this.event = '';
      this.ownId = false;
      return;
    }
    if (line.startsWith(':')) return;
    const i = line.indexOf(':');
    const field = i < 0 ? line : line.slice(0, i);
    let value = i < 0 ? '' : line.slice(i + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) {
      this.id = value;
      this.ownId = true;
    }
  }
}
