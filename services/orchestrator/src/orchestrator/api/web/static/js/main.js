// Wiring: the URL says what is open (?s=<session> a conversation, ?r=<run> a research report),
// the composer asks, the sidebar lists and reopens.

import { ApiError, adoptTokenFromFragment, getJSON, onUnauthorized, setToken } from "./api.js";
import { Composer } from "./composer.js";
import { installDocuments } from "./documents.js";
import { h } from "./dom.js";
import { installDomains, withDomains } from "./domains.js";
import { installExportMenu } from "./export.js";
import { installSourceCard } from "./markdown.js";
import { collect, installOptions } from "./options.js";
import { ask, restoreTurn, STORED, Turn } from "./quick.js";
import { ResearchView } from "./research.js";
import { installSchedules } from "./schedules.js";
import * as sessions from "./sessions.js";
import { installSettings } from "./settings.js";

const $ = (id) => document.getElementById(id);
const state = { sessionId: null, researchId: null, controller: null };

function newId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function show(view) {
  $("quick-view").hidden = view !== "quick";
  $("research-view").hidden = view !== "research";
  document.body.dataset.view = view;
}

function navigate(query) {
  history.pushState(null, "", query ? `?${query}` : location.pathname);
}

async function refreshSidebar() {
  const current = state.researchId || state.sessionId;
  try {
    const items = await sessions.listAll();
    sessions.draw($("session-list"), items, { current, onOpen: openItem, onDelete: deleteItem, onRename: renameItem });
  } catch (err) {
    $("session-list").replaceChildren(h("p", { class: "empty", text: `Could not list conversations: ${err.message}` }));
  }
}

// The memory meter: how much of the conversation the next question carries (GET
// /v1/sessions/{id}'s ``memory``); hidden without a conversation.
function showMemory(memory) {
  const box = $("memory");
  if (!memory || !memory.turns) {
    box.hidden = true;
    return;
  }
  const meter = $("memory-meter");
  const budget = Math.max(memory.budget, 1);
  meter.max = budget;
  meter.high = budget * 0.8;
  meter.value = Math.min(memory.chars, budget);
  const share = Math.round((100 * memory.chars) / budget);
  $("memory-text").textContent = memory.dropped
    ? `${share} % · ${memory.dropped} of ${memory.turns} turns left out`
    : `${share} % · ${memory.kept} ${memory.kept === 1 ? "turn" : "turns"}`;
  box.title = `The next question carries ${memory.kept} of ${memory.turns} turns: ${memory.chars} of ${memory.budget} characters of history.`;
  box.hidden = false;
}

async function refreshMemory(id) {
  try {
    const session = await getJSON(`/v1/sessions/${encodeURIComponent(id)}`);
    if (state.sessionId === id) showMemory(session.memory);
  } catch {
    // gone or unreachable: the meter keeps its last reading
  }
}

function closeNav() {
  document.body.classList.remove("nav-open");
  $("menu").setAttribute("aria-expanded", "false");
}

function newConversation() {
  stopQuick();
  research.detach();
  Object.assign(state, { sessionId: null, researchId: null });
  $("thread").replaceChildren();
  $("intro").hidden = false;
  showMemory(null);
  show("quick");
  navigate(null);
  closeNav();
  refreshSidebar();
  $("q").focus();
}

async function openSession(id) {
  research.detach(); // a report left open stops streaming into a hidden view
  show("quick");
  Object.assign(state, { sessionId: id, researchId: null });
  $("thread").replaceChildren();
  $("intro").hidden = true;
  showMemory(null);
  try {
    const session = await getJSON(`/v1/sessions/${encodeURIComponent(id)}`);
    const turns = session.turns || [];
    for (const turn of turns) restoreTurn($("thread"), turn, { onEdit: editTurn });
    showMemory(session.memory);
    if (!turns.length) $("intro").hidden = false;
    // A link opened here joins this browser's list (until the server lists sessions itself).
    else sessions.remember({ id, title: turns[0].question, type: "chat", updated: session.updated * 1000 });
  } catch (err) {
    const gone = err instanceof ApiError && err.status === 404;
    if (gone) sessions.forget(id);
    $("thread").append(h("p", { class: "notice", role: "alert", text: gone ? "This conversation is no longer on the server (sessions expire after a while without use, and a restart may forget them). Ask a new question to start again." : err.message }));
  }
}

async function openResearch(id) {
  show("research");
  Object.assign(state, { researchId: id });
  await research.open(id);
}

function openItem(item) {
  closeNav();
  if (item.type === "research") {
    navigate(`r=${encodeURIComponent(item.id)}`);
    openResearch(item.id);
  } else {
    navigate(`s=${encodeURIComponent(item.id)}`);
    openSession(item.id);
  }
  refreshSidebar();
}

async function deleteItem(item) {
  try {
    await sessions.remove(item);
  } catch (err) {
    $("session-list").prepend(h("p", { class: "notice", role: "alert", text: `Could not delete: ${err.message}` }));
    return;
  }
  if (item.id === state.sessionId || item.id === state.researchId) newConversation();
  else refreshSidebar();
}

async function renameItem(item, title) {
  try {
    await sessions.rename(item, title);
  } catch (err) {
    $("session-list").prepend(h("p", { class: "notice", role: "alert", text: `Could not rename: ${err.message}` }));
  }
  refreshSidebar();
}

function stopQuick() {
  if (state.controller) state.controller.abort();
}

// Ask ``query`` in the open conversation (a new one if none); ``editing`` (1-based) re-asks
// that turn instead, the server replacing it and every turn after it.
async function askQuick(query, { editing = null } = {}) {
  research.detach();
  show("quick");
  $("intro").hidden = true;
  if (!state.sessionId) {
    state.sessionId = newId();
    navigate(`s=${state.sessionId}`);
  }
  state.researchId = null;
  const turn = new Turn($("thread"), query, { onEdit: editTurn });
  turn.el.scrollIntoView({ block: "start" });
  if (!editing) composer.clear();
  composer.busy(true);
  const controller = (state.controller = new AbortController());
  const sessionId = state.sessionId;
  sessions.remember({ id: sessionId, title: query, type: "chat" });
  refreshSidebar();
  await ask(turn, { query, sessionId, signal: controller.signal, options: collect(), editTurn: editing });
  if (state.controller === controller) state.controller = null;
  composer.busy(false);
  // A failed or stopped edit changed nothing on the server: show its turns again.
  if (editing && !STORED.has(turn.el.dataset.status)) await restoreAfter(sessionId, editing, turn);
  refreshSidebar();
  refreshMemory(sessionId);
}

// Put the server's turns from ``from`` (1-based) on back, before the failed edit's turn.
async function restoreAfter(id, from, failed) {
  try {
    const session = await getJSON(`/v1/sessions/${encodeURIComponent(id)}`);
    if (state.sessionId !== id) return;
    const holder = h("div");
    for (const stored of (session.turns || []).slice(from - 1)) restoreTurn(holder, stored, { onEdit: editTurn });
    failed.el.before(...holder.children);
  } catch {
    // the server is gone too: the failed turn says so
  }
}

// Edit (or regenerate) a turn: it and the turns after it leave the page, and the question is
// asked again in its place. Nothing while another question runs (the turns would shift).
function editTurn(turn, query) {
  if (state.controller || !state.sessionId) return;
  const turns = [...$("thread").querySelectorAll(".turn")];
  const at = turns.indexOf(turn.el);
  if (at < 0) return;
  const index = turns.slice(0, at).filter((el) => STORED.has(el.dataset.status)).length + 1;
  for (const el of turns.slice(at)) el.remove();
  askQuick(query, { editing: index });
}

async function startResearch(query, mode) {
  composer.busy(true);
  showMemory(null);
  try {
    const sessionId = state.sessionId || newId();
    const started = await getJSON("/v1/research", { method: "POST", body: withDomains({ query, mode, session_id: sessionId }) });
    const id = started.research_id;
    state.researchId = id;
    sessions.remember({ id, title: query, type: "research" });
    composer.clear();
    navigate(`r=${encodeURIComponent(id)}`);
    show("research");
    refreshSidebar();
    composer.busy(false);
    await research.start(id, { query, mode, sessionId });
    refreshSidebar();
  } catch (err) {
    composer.busy(false);
    show("quick");
    $("intro").hidden = true;
    $("thread").append(h("p", { class: "notice", role: "alert", text: `Could not start the research: ${err.message}` }));
  }
}

// A follow-up from a finished report continues its chat session (compacted context).
function followUp(question, sessionId) {
  Object.assign(state, { sessionId: sessionId || newId(), researchId: null });
  $("thread").replaceChildren();
  navigate(`s=${state.sessionId}`);
  askQuick(question);
}

async function route() {
  const params = new URLSearchParams(location.search);
  if (params.get("r")) {
    refreshSidebar();
    return openResearch(params.get("r"));
  }
  if (params.get("s")) await openSession(params.get("s"));
  else {
    Object.assign(state, { sessionId: null, researchId: null });
    $("thread").replaceChildren();
    $("intro").hidden = false;
    show("quick");
  }
  refreshSidebar();
}

// A server with tokens answers 401: ask once, keep the token in this browser.
function installTokenDialog() {
  const dialog = $("token-dialog");
  let asking = null; // requests refused together share one question
  onUnauthorized(() => (asking ||= ask()));
  const ask = () => new Promise((resolve) => {
    $("token-input").value = "";
    dialog.returnValue = "";
    dialog.addEventListener("close", () => {
      const ok = dialog.returnValue === "save" && $("token-input").value.trim() !== "";
      if (ok) setToken($("token-input").value.trim());
      asking = null;
      resolve(ok);
    }, { once: true });
    dialog.showModal();
  });
}

adoptTokenFromFragment();
installTokenDialog();
installSettings($("open-settings"), $("settings-dialog"));
installOptions();
installSourceCard($("source-card"));
installDocuments({ button: $("open-docs"), dialog: $("docs-dialog"), before: $("composer") });
installDomains($("composer"));
installSchedules({ button: $("open-schedules"), dialog: $("schedules-dialog") });
const composer = new Composer($("composer"), {
  onSubmit: (query, mode) => (mode ? startResearch(query, mode) : askQuick(query)),
  onStop: () => (state.controller ? stopQuick() : research.stop()),
});
const research = new ResearchView({ onFollowUp: followUp });
$("new-chat").addEventListener("click", newConversation);
$("menu").addEventListener("click", () => {
  const open = document.body.classList.toggle("nav-open");
  $("menu").setAttribute("aria-expanded", String(open));
});
document.addEventListener("keydown", (e) => {
  if (e.key === "Escape" && document.body.classList.contains("nav-open")) closeNav();
  // "/" from anywhere but a text field jumps to the question box
  if (e.key === "/" && !/^(INPUT|TEXTAREA)$/.test(document.activeElement.tagName) && !$("quick-view").hidden) {
    $("q").focus();
  }
});
// On a narrow screen the sidebar covers the page: a tap beside it closes it.
$("main").addEventListener("click", (e) => {
  if (document.body.classList.contains("nav-open") && !e.target.closest("#menu")) closeNav();
});
// Downloads: the open report's, and the open conversation's (shown once it has a turn).
installExportMenu($("r-export"), () => state.researchId && `/v1/research/${encodeURIComponent(state.researchId)}`);
installExportMenu($("s-export"), () => state.sessionId && `/v1/sessions/${encodeURIComponent(state.sessionId)}`);
new MutationObserver(() => {
  $("s-export").hidden = !state.sessionId || !$("thread").children.length || $("quick-view").hidden;
}).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-view"] });
window.addEventListener("popstate", route);
route();
