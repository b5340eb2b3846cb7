// api.js: the HTTP API of DESIGN §11. The panel is signed in by an
// HttpOnly cookie the server set when the login URL was opened, so no
// token is ever visible to scripts.

// ApiError is a failed request: status is the HTTP status, code and
// message come from the server's {"error": {"code", "message"}} body.
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || code || 'HTTP ' + status);
    this.status = status;
    this.code = code || '';
  }
}

let onSignedOut = () => {};

// setSignedOutHandler sets what happens when the server answers 401.
export function setSignedOutHandler(fn) {
  onSignedOut = fn;
}

// api calls one route and returns its JSON body (null for an empty one).
export async function api(method, path, body) {
  const init = { method, credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, 'unreachable', 'The server did not answer (' + e.message + '). Is `mx-claw serve` still running?');
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!res.ok) {
    if (res.status === 401) onSignedOut();
    const err = data && data.error ? data.error : {};
    throw new ApiError(res.status, err.code, err.message || text.slice(0, 200) || res.statusText);
  }
  return data;
}

export const get = (path) => api('GET', path);
export const post = (path, body) => api('POST', path, body === undefined ? {} : body);
export const put = (path, body) => api('PUT', path, body);
// A DELETE carries an empty JSON body too: the server refuses a mutation
// without Content-Type: application/json.
export const del = (path) => api('DELETE', path, {});

// enc escapes one path segment.
export const enc = encodeURIComponent;
