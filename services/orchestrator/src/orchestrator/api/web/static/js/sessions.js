// The sidebar: past conversations (GET /v1/sessions) and research runs (GET /v1/research),
// grouped by day. Until the server lists sessions, the ids this browser created are kept in
// localStorage and listed from there.

import { ApiError, getJSON, request } from "./api.js";
import { h } from "./dom.js";

const LOCAL_KEY = "quarry.sessions";
const HIDDEN_KEY = "quarry.hidden";
const SVG = "http://www.w3.org/2000/svg";
const ICONS = {
  // a speech bubble for a conversation, a stacked report for a research run
  chat: "M4 5h16v10H9l-5 4z",
  research: "M6 3h9l4 4v14H6zM9 10h7M9 14h7M9 18h5",
};

function readList(key) {
  try {
    return JSON.parse(localStorage.getItem(key) || "[]");
  } catch {
    return [];
  }
}

export function remember(item) {
  const list = readList(LOCAL_KEY).filter((s) => s.id !== item.id);
  const old = readList(LOCAL_KEY).find((s) => s.id === item.id);
  list.unshift({ ...old, ...item, title: (old && old.title) || item.title, updated: item.updated || Date.now() });
  localStorage.setItem(LOCAL_KEY, JSON.stringify(list.slice(0, 200)));
}

export function forget(id) {
  localStorage.setItem(LOCAL_KEY, JSON.stringify(readList(LOCAL_KEY).filter((s) => s.id !== id)));
}

export function localType(id) {
  const item = readList(LOCAL_KEY).find((s) => s.id === id);
  return item ? item.type : null;
}

function when(value) {
  if (typeof value === "number") return value < 1e12 ? value * 1000 : value;
  const parsed = Date.parse(value || "");
  return Number.isNaN(parsed) ? 0 : parsed;
}

// GET /v1/sessions ({sessions}) and GET /v1/research ({runs}). ``type`` says how an entry
// opens (a conversation or a report); ``icon`` marks a conversation a research run started.
function normalise(body, type) {
  const items = Array.isArray(body) ? body : body.items || body.sessions || body.runs || [];
  return items.map((item) => ({
    // a run names its conversation too (session_id): its own id is research_id
    id: type === "research" ? item.research_id || item.id : item.id || item.session_id,
    title: item.title || item.query || item.question || "Untitled",
    type,
    icon: item.type === "research" ? "research" : type,
    turns: item.turns,
    updated: when(item.updated || item.updated_at || item.created_at || item.created),
    status: item.status,
    sessionId: type === "research" ? item.session_id || null : null,
  }));
}

async function serverList(path, type) {
  try {
    return normalise(await getJSON(path), type);
  } catch (err) {
    // 404/405: this server has no such list yet; anything else is worth saying.
    if (err instanceof ApiError && (err.status === 404 || err.status === 405)) return null;
    throw err;
  }
}

export async function listAll() {
  const [chats, runs] = await Promise.all([
    serverList("/v1/sessions?limit=100", "chat"),
    serverList("/v1/research?limit=100", "research"),
  ]);
  const local = readList(LOCAL_KEY);
  const byId = new Map();
  // The server is the truth for what it lists; local ids fill in what it cannot list yet.
  for (const item of local) {
    if ((item.type === "chat" && chats === null) || (item.type === "research" && runs === null)) byId.set(item.id, item);
  }
  for (const item of [...(chats || []), ...(runs || [])]) {
    const mine = local.find((s) => s.id === item.id);
    byId.set(item.id, { ...item, title: item.title !== "Untitled" ? item.title : (mine && mine.title) || item.title });
  }
  // A research run's own conversation (listed with type "research") holds just the report's
  // gist until a follow-up: the run stands for it in the list. Runs name their conversation;
  // a server whose runs do not is matched by title.
  const joined = new Set((runs || []).map((r) => r.sessionId).filter(Boolean));
  const reports = new Set((runs || []).filter((r) => !r.sessionId).map((r) => r.title));
  for (const item of chats || []) {
    const ofRun = joined.has(item.id) || reports.has(item.title);
    if (item.icon === "research" && (item.turns || 0) <= 1 && ofRun) byId.delete(item.id);
  }
  const hidden = new Set(readList(HIDDEN_KEY));
  return [...byId.values()].filter((s) => s.id && !hidden.has(s.id)).sort((a, b) => b.updated - a.updated);
}

export function group(items, now = new Date()) {
  const day = new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime();
  const groups = [["Today", []], ["Yesterday", []], ["This week", []], ["Older", []]];
  for (const item of items) {
    const t = item.updated;
    const index = t >= day ? 0 : t >= day - 864e5 ? 1 : t >= day - 6 * 864e5 ? 2 : 3;
    groups[index][1].push(item);
  }
  return groups.filter(([, list]) => list.length);
}

function icon(type) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", `icon icon-${type}`);
  svg.setAttribute("aria-hidden", "true");
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", ICONS[type] || ICONS.chat);
  svg.append(path);
  return svg;
}

// PATCH /v1/sessions/{id}: a conversation's new title (this browser's list follows).
export async function rename(item, title) {
  await request(`/v1/sessions/${encodeURIComponent(item.id)}`, { method: "PATCH", body: { title } });
  const list = readList(LOCAL_KEY).map((s) => (s.id === item.id ? { ...s, title } : s));
  localStorage.setItem(LOCAL_KEY, JSON.stringify(list));
}

// An inline form in place of the entry's link: Enter renames, Escape (or Cancel) keeps it.
function renameForm(li, item, onRename, onCancel) {
  const input = h("input", { type: "text", value: item.title, maxlength: "200", "aria-label": `New title for “${item.title}”` });
  const form = h("form", {
    class: "rename-form",
    onsubmit: (e) => {
      e.preventDefault();
      const title = input.value.trim();
      if (title && title !== item.title) onRename(item, title);
      else onCancel();
    },
  }, input, h("button", { type: "submit" }, "Save"), h("button", { type: "button", onclick: onCancel }, "Cancel"));
  input.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.preventDefault();
      onCancel();
    }
  });
  li.replaceChildren(form);
  input.focus();
  input.select();
}

export async function remove(item) {
  const path = item.type === "research" ? `/v1/research/${item.id}` : `/v1/sessions/${item.id}`;
  try {
    await request(path, { method: "DELETE" });
  } catch (err) {
    // Gone already (expired), or a finished run the API keeps until its TTL: hide it here.
    if (!(err instanceof ApiError && (err.status === 404 || err.status === 409))) throw err;
  }
  forget(item.id);
  if (item.type === "research") {
    localStorage.setItem(HIDDEN_KEY, JSON.stringify([...readList(HIDDEN_KEY), item.id].slice(-500)));
  }
}

// Draw the grouped list; ``current`` is the open id; ``onOpen``/``onDelete`` get the item.
export function draw(nav, items, { current, onOpen, onDelete, onRename }) {
  if (!items.length) {
    nav.replaceChildren(h("p", { class: "empty", text: "No conversations yet." }));
    return;
  }
  const sections = group(items).map(([label, list]) =>
    h("section", { class: "group", "aria-label": label },
      h("h2", { text: label }),
      h("ul", {}, list.map((item) => {
        const href = item.type === "research" ? `?r=${encodeURIComponent(item.id)}` : `?s=${encodeURIComponent(item.id)}`;
        const link = h("a", {
          href,
          class: "session-link",
          "aria-current": item.id === current ? "page" : null,
          dataset: { id: item.id, type: item.type },
          onclick: (e) => {
            e.preventDefault();
            onOpen(item);
          },
        }, icon(item.icon || item.type), h("span", { class: "session-title", text: item.title }),
        (item.icon || item.type) === "research" ? h("span", { class: "sr-only", text: " (research)" }) : null);
        const del = h("button", {
          type: "button",
          class: "session-delete",
          "aria-label": `Delete “${item.title}”`,
          title: "Delete",
          onclick: () => onDelete(item),
        }, "×");
        const li = h("li", { class: "session" }, link);
        // conversations can be renamed (PATCH /v1/sessions); research runs keep their question
        if (item.type === "chat" && onRename) {
          const restore = () => {
            li.replaceChildren(link, edit, del);
            edit.focus();
          };
          const edit = h("button", {
            type: "button",
            class: "session-rename",
            "aria-label": `Rename “${item.title}”`,
            title: "Rename",
            onclick: () => renameForm(li, item, onRename, restore),
          }, "✎");
          li.append(edit);
        }
        li.append(del);
        return li;
      }))));
  nav.replaceChildren(...sections);
}
