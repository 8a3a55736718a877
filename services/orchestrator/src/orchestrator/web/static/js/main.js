// Wiring: the URL says what is open (?s=<session> a conversation, ?r=<run> a research report),
// the composer asks, the sidebar lists and reopens.

import { ApiError, adoptTokenFromFragment, getJSON, onUnauthorized, setToken } from "./api.js";
import { Composer } from "./composer.js";
import { installDocuments } from "./documents.js";
import { h } from "./dom.js";
import { installSourceCard } from "./markdown.js";
import { ask, restoreTurn, Turn } from "./quick.js";
import { ResearchView } from "./research.js";
import * as sessions from "./sessions.js";

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
    sessions.draw($("session-list"), items, { current, onOpen: openItem, onDelete: deleteItem });
  } catch (err) {
    $("session-list").replaceChildren(h("p", { class: "empty", text: `Could not list conversations: ${err.message}` }));
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
  try {
    const session = await getJSON(`/v1/sessions/${encodeURIComponent(id)}`);
    const turns = session.turns || [];
    for (const turn of turns) restoreTurn($("thread"), turn);
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

function stopQuick() {
  if (state.controller) state.controller.abort();
}

async function askQuick(query) {
  research.detach();
  show("quick");
  $("intro").hidden = true;
  if (!state.sessionId) {
    state.sessionId = newId();
    navigate(`s=${state.sessionId}`);
  }
  state.researchId = null;
  const turn = new Turn($("thread"), query);
  turn.el.scrollIntoView({ block: "start" });
  composer.clear();
  composer.busy(true);
  const controller = (state.controller = new AbortController());
  sessions.remember({ id: state.sessionId, title: query, type: "chat" });
  refreshSidebar();
  await ask(turn, { query, sessionId: state.sessionId, signal: controller.signal });
  if (state.controller === controller) state.controller = null;
  composer.busy(false);
  refreshSidebar();
}

async function startResearch(query, mode) {
  composer.busy(true);
  try {
    const sessionId = state.sessionId || newId();
    const started = await getJSON("/v1/research", { method: "POST", body: { query, mode, session_id: sessionId } });
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
installSourceCard($("source-card"));
installDocuments({ button: $("open-docs"), dialog: $("docs-dialog"), before: $("composer") });
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
window.addEventListener("popstate", route);
route();
