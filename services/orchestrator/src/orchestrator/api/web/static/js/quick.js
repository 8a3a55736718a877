// Quick search: one turn = a question, the activity line, sources, the streamed answer.

import { withScope } from "./documents.js";
import { ApiError, readEvents, request } from "./api.js";
import { copyText, download, h, seconds, slug } from "./dom.js";
import { policyNote, withDomains } from "./domains.js";
import { hostOf, markSentences, passageOf, renderInto, safeHref } from "./markdown.js";

// What an error code means for the person looking at the page.
const EXPLAIN = {
  llm_unavailable: "The language model server could not be reached or failed. Check that it runs (LLM_BASE_URL).",
  search_unavailable: "No source could be searched: SearXNG and/or the local documents did not answer.",
  no_results: "The search found nothing to read. Try other words.",
  budget_exhausted: "The time budget ran out before any evidence was found.",
  internal: "Something went wrong inside Quarry; the server log has the details.",
};

const STAGES = [
  ["plan", "Planning"],
  ["search", "Searching"],
  ["read", "Reading"],
  ["judge", "Judging"],
  ["write", "Writing"],
];

let turnCounter = 0;
// Turns the server keeps (a failed or stopped run leaves nothing): edit_turn counts only these.
export const STORED = new Set(["answered", "clarify", "from_history"]);

export function sourceItem(source, prefix) {
  const href = safeHref(source.url);
  const body = [
    h("span", { class: "src-num", text: String(source.n) }),
    h("span", { class: "src-host", text: hostOf(source) }),
    h("span", { class: `src-origin ${source.origin || "web"}`, text: source.origin === "local" ? "local" : "web" }),
    h("span", { class: "src-title", text: source.title || source.url }),
    h("span", { class: "src-excerpt", text: source.excerpt || passageOf(source) }),
  ];
  const inner = href
    ? h("a", { href, target: "_blank", rel: "noopener noreferrer nofollow" }, body)
    : h("div", { title: source.url }, body);
  return h("li", { class: "source", id: `${prefix}-${source.n}` }, inner);
}

export function markdownOf(question, answer, sources) {
  const list = [...sources.values()].map((s) => `${s.n}. [${s.title || s.url}](${s.url})`);
  return `# ${question}\n\n${answer.trim()}\n${list.length ? `\n## Sources\n\n${list.join("\n")}\n` : ""}`;
}

export class Turn {
  // ``onEdit(turn, question)``: ask this turn again (edited, or the same text to regenerate).
  constructor(thread, question, { onEdit = null } = {}) {
    this.onEdit = onEdit;
    this.id = `t${++turnCounter}`;
    this.question = question;
    this.sources = new Map();
    this.answer = "";
    this.thinking = "";
    this.reads = { done: 0, total: 0 };
    this.searchCount = 0;
    this.pending = false;
    this.stages = new Map();
    this.el = h("article", { class: "turn", "aria-labelledby": `${this.id}-q` },
      (this.questionRow = h("div", { class: "question-row" },
        h("h2", { class: "question", id: `${this.id}-q`, text: question }),
        (this.editControls = h("div", { class: "turn-edit", hidden: true },
          h("button", { type: "button", class: "edit", "aria-label": `Edit question: ${question}`, onclick: () => this.startEdit() }, "Edit"),
          h("button", { type: "button", class: "regenerate", "aria-label": `Regenerate the answer to: ${question}`, onclick: () => this.onEdit(this, this.question) }, "Regenerate"))))),
      (this.activity = h("ol", { class: "stages", "aria-label": "Progress" })),
      (this.status = h("p", { class: "status", role: "status", "aria-live": "polite" })),
      (this.warnings = h("ul", { class: "warnings", "aria-label": "Warnings", hidden: true })),
      (this.thinkingBox = h("details", { class: "thinking", hidden: true },
        h("summary", { text: "Thinking" }),
        (this.thinkingText = h("div", { class: "thinking-text" })))),
      (this.sourcesBox = h("section", { class: "sources", "aria-label": "Sources", hidden: true },
        h("h3", { text: "Sources" }),
        (this.sourceList = h("ol", { class: "source-list" })))),
      (this.answerEl = h("div", { class: "answer markdown", "aria-busy": "false" })),
      (this.errorEl = h("div", { class: "error", role: "alert", hidden: true })),
      (this.actions = h("div", { class: "turn-actions", hidden: true },
        h("button", { type: "button", class: "copy", onclick: (e) => copyText(e.currentTarget, this.markdown()) }, "Copy answer"),
        h("button", { type: "button", class: "download", onclick: () => download(`${slug(question)}.md`, this.markdown()) }, "Download Markdown"))));
    for (const [key, label] of STAGES) {
      const li = h("li", { class: "stage", dataset: { stage: key } }, label);
      this.stages.set(key, li);
    }
    thread.append(this.el);
  }

  markdown() {
    return markdownOf(this.question, this.answer, this.sources);
  }

  // Edit and Regenerate, once the server keeps this turn (and a caller can re-ask it).
  editable() {
    this.editControls.hidden = !(this.onEdit && STORED.has(this.el.dataset.status));
  }

  // The question becomes a text box: Enter (or Save) re-asks it, Escape (or Cancel) keeps it.
  startEdit() {
    const box = h("textarea", { class: "edit-box", rows: "2", "aria-label": "Edited question" });
    box.value = this.question;
    const cancel = () => {
      form.replaceWith(this.questionRow);
      this.editControls.querySelector(".edit").focus();
    };
    const form = h("form", {
      class: "edit-form",
      onsubmit: (e) => {
        e.preventDefault();
        const text = box.value.trim();
        if (text) this.onEdit(this, text);
      },
    }, box, h("div", { class: "edit-actions" },
      h("button", { type: "submit", class: "primary" }, "Save and regenerate"),
      h("button", { type: "button", onclick: cancel }, "Cancel")));
    box.addEventListener("keydown", (e) => {
      if (e.key === "Escape") {
        e.preventDefault();
        cancel();
      } else if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        form.requestSubmit();
      }
    });
    this.questionRow.replaceWith(form);
    box.focus();
  }

  stage(key, label, state = "active") {
    const li = this.stages.get(key);
    if (!li.isConnected) this.activity.append(li);
    for (const [k, other] of this.stages) if (k !== key && other.dataset.state === "active") other.dataset.state = "done";
    li.dataset.state = state;
    li.textContent = label;
  }

  say(text) {
    this.status.textContent = text;
  }

  warn(text) {
    this.warnings.hidden = false;
    this.warnings.append(h("li", { text }));
  }

  fail(message, code) {
    this.errorEl.hidden = false;
    const why = EXPLAIN[code];
    this.errorEl.replaceChildren(h("strong", { text: message }), why ? h("p", { text: why }) : "");
  }

  setSources(sources) {
    this.sources = new Map(sources.map((s) => [s.n, s]));
    this.sourceList.replaceChildren(...sources.map((s) => sourceItem(s, `${this.id}-src`)));
    this.sourcesBox.hidden = sources.length === 0;
  }

  render() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      // finish() drew the checked answer (and its marks) since: a late frame must not undo it
      if (!this.finished) renderInto(this.answerEl, this.answer, this.sources);
    });
  }

  finish(answer, support = null) {
    this.finished = true;
    this.answer = answer;
    renderInto(this.answerEl, this.answer, this.sources, { highlight: true });
    if (support) this.showSupport(support);
    this.actions.hidden = !this.answer.trim();
  }

  // The engine's check of each sentence against its sources: quiet marks, and the share.
  showSupport({ sentences, support_score: score }) {
    markSentences(this.answerEl, sentences);
    if (score === null || score === undefined) return;
    const claims = (sentences || []).filter((s) => s.support);
    const supported = claims.filter((s) => s.support === "supported").length;
    const note = h("p", {
      class: "support-score",
      title: "Sentences whose cited passage holds their claim (checked by Quarry, not by the model)",
      text: `Supported by its sources: ${supported} of ${claims.length} claims (${Math.round(score * 100)} %)`,
    });
    this.answerEl.after(note);
  }

  // One event of the run (docs/api.md "Events").
  on({ type, data }) {
    switch (type) {
      case "run.started":
        this.stage("plan", "Planning");
        this.say("Planning the search…");
        break;
      case "memory":
        // the oldest turns of a long conversation no longer fit the model's budget
        if (data.dropped) this.warn(`The ${data.dropped} oldest of ${data.turns} earlier turns are left out of the model's memory.`);
        break;
      case "plan":
        if (data.action === "proceed") this.say(`Searching for “${data.optimized_query}”`);
        break;
      case "clarify":
        this.finish(data.question);
        this.answerEl.classList.add("clarify");
        break;
      case "search.started":
        this.stage("search", `Searching ${data.source === "local" ? "your documents" : "the web"}`);
        this.say(`Searching ${data.source === "local" ? "your documents" : "the web"} for “${data.query}”`);
        break;
      case "search.completed":
        this.searchCount += data.count;
        this.stage("search", `Searched · ${this.searchCount} results`);
        break;
      case "read.started":
        this.reads.total += data.count;
        this.stage("read", `Reading ${this.reads.done}/${this.reads.total}`);
        break;
      case "read.completed":
        this.reads.done += 1;
        this.stage("read", `Reading ${this.reads.done}/${this.reads.total}`);
        this.say(`Read ${data.title || data.url}`);
        break;
      case "judge":
        this.stage("judge", `Judging · ${data.verdict}`);
        this.say(data.verdict === "sufficient" ? "The evidence is enough." : `Evidence ${data.verdict}; looking further.`);
        break;
      case "sources":
        this.setSources(data.sources || []);
        this.stage("write", "Writing");
        this.say(`Writing the answer from ${data.sources.length} sources…`);
        break;
      case "thinking":
        this.thinking += data.text || data.delta || "";
        this.thinkingBox.hidden = false;
        this.thinkingText.textContent = this.thinking;
        break;
      case "answer.delta":
        this.answer += data.text;
        this.answerEl.setAttribute("aria-busy", "true");
        this.render();
        break;
      case "answer.completed":
        this.answerEl.setAttribute("aria-busy", "false");
        this.finish(data.text, data);
        break;
      case "policy": {
        const note = policyNote(data);
        if (note) this.warn(note);
        break;
      }
      case "warning":
        this.warn(data.message);
        break;
      case "error":
        this.fail(data.message, data.code);
        break;
      case "run.completed":
        this.complete(data);
        break;
      default:
        break;
    }
  }

  complete(data) {
    for (const li of this.stages.values()) if (li.dataset.state === "active") li.dataset.state = "done";
    const what = { answered: "Answered", clarify: "Needs a clarification", from_history: "Answered from the conversation", error: "Failed" };
    const pages = data.pages_read ? ` · ${data.pages_read} pages read` : "";
    this.say(`${what[data.status] || data.status} in ${seconds(data.duration_ms)}${pages}`);
    this.el.dataset.status = data.status;
    this.actions.hidden = !this.answer.trim();
    this.editable();
  }

  stopped() {
    for (const li of this.stages.values()) if (li.dataset.state === "active") li.dataset.state = "done";
    this.answerEl.setAttribute("aria-busy", "false");
    this.say("Stopped. The server cancelled the run; nothing was saved.");
    this.el.dataset.status = "stopped";
    this.actions.hidden = !this.answer.trim();
  }
}

// Ask one question; resolves when the run ends, is stopped, or fails. ``options`` are
// POST /v1/search's; ``editTurn`` (1-based) re-asks that turn of the session, replacing it and
// the turns after it.
export async function ask(turn, { query, sessionId, signal, options = {}, editTurn = null }) {
  const body = { query, session_id: sessionId };
  if (Object.keys(options).length) body.options = options;
  if (editTurn) body.edit_turn = editTurn;
  try {
    const response = await request("/v1/search", {
      method: "POST",
      body: withScope(withDomains(body)),
      accept: "text/event-stream",
      signal,
    });
    await readEvents(response, (event) => {
      try {
        turn.on(event);
      } catch (err) {
        // one event that cannot be drawn must not stop the rest of the answer
        console.error(`event ${event.type}`, err);
      }
    });
    if (!turn.el.dataset.status) turn.fail("The connection closed before the run finished.");
  } catch (err) {
    if (err.name === "AbortError") turn.stopped();
    else turn.fail(err instanceof ApiError ? err.message : String(err));
  }
}

// A finished turn from a stored session (GET /v1/sessions/{id}).
export function restoreTurn(thread, stored, { onEdit = null } = {}) {
  const turn = new Turn(thread, stored.question, { onEdit });
  turn.setSources(stored.sources || []);
  turn.finish(stored.answer || "");
  const note = stored.policy ? policyNote(stored.policy) : null;
  if (note) turn.warn(note);
  if (stored.status === "clarify") turn.answerEl.classList.add("clarify");
  turn.el.dataset.status = stored.status;
  turn.editable();
  return turn;
}
