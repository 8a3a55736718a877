// Talking to the orchestrator: a bearer token when the server needs one, RFC 7807 problems
// turned into readable errors, and Server-Sent Events read from a fetch() body (EventSource
// cannot POST, nor send an Authorization header).

const TOKEN_KEY = "quarry.token";

export class ApiError extends Error {
  constructor(status, title, detail) {
    super(detail || title || `HTTP ${status}`);
    this.status = status;
    this.title = title;
  }
}

// A token may arrive once in the URL fragment (#token=…): keep it, then drop it from the
// address bar and history so it is not shared with a copied link.
export function adoptTokenFromFragment() {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (!match) return;
  localStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
  history.replaceState(history.state, "", location.pathname + location.search);
}

export function setToken(token) {
  if (token) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
}

let askToken = async () => false;

// main.js installs the dialog that asks for a token after a 401.
export function onUnauthorized(handler) {
  askToken = handler;
}

function headers(extra) {
  const out = { ...extra };
  const token = localStorage.getItem(TOKEN_KEY);
  if (token) out.Authorization = `Bearer ${token}`;
  return out;
}

async function problemOf(response) {
  let body = {};
  try {
    body = await response.json();
  } catch {
    // not JSON: a proxy's page; the status says enough
  }
  const retry = response.headers.get("Retry-After");
  let detail = body.detail || "";
  if (response.status === 429 && retry) detail = `${detail} Try again in ${retry} s.`.trim();
  return new ApiError(response.status, body.title || response.statusText, detail);
}

// fetch() with the token; a 401 asks for a token once and retries.
export async function request(path, { method = "GET", body, accept = "application/json", signal, extra = {} } = {}) {
  for (let attempt = 0; ; attempt++) {
    const init = { method, signal, headers: headers({ Accept: accept, ...extra }) };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers["Content-Type"] = "application/json";
    }
    let response;
    try {
      response = await fetch(path, init);
    } catch (err) {
      if (err.name === "AbortError") throw err;
      throw new ApiError(0, "Offline", "Cannot reach the Quarry server. Is it running?");
    }
    if (response.status === 401 && attempt === 0 && (await askToken())) continue;
    if (!response.ok) throw await problemOf(response);
    return response;
  }
}

export async function getJSON(path, opts) {
  const response = await request(path, opts);
  return response.status === 204 ? null : response.json();
}

// Read an SSE body and call onEvent({id, type, data}) per event. Comment lines (":…",
// heartbeats) are skipped; data lines of one event are joined with "\n" as the spec says.
export async function readEvents(response, onEvent) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let event = { id: null, type: "message", data: [] };
  const dispatch = () => {
    if (event.data.length) {
      let data = event.data.join("\n");
      try {
        data = JSON.parse(data);
      } catch {
        // keep the text
      }
      onEvent({ id: event.id, type: event.type, data });
    }
    event = { id: event.id, type: "message", data: [] };
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop();
    for (const line of lines) {
      if (line === "") dispatch();
      else if (line.startsWith(":")) continue;
      else {
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "data") event.data.push(value);
        else if (field === "event") event.type = value;
        else if (field === "id") event.id = value;
      }
    }
  }
  dispatch();
}
