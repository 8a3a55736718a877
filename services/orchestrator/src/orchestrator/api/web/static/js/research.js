// The deep-research view (docs/api.md "Deep research"): activity feed | report | sources.
// A reload re-attaches: GET the run's state, then follow its events after `last_event_id`
// with Last-Event-ID, so nothing is missed and nothing is drawn twice.

import { ApiError, getJSON, readEvents, request } from "./api.js";
import { copyText, download, h, seconds } from "./dom.js";
import { renderInto } from "./markdown.js";
import { sourceItem } from "./quick.js";

const TERMINAL = new Set(["research.completed", "research.cancelled", "error"]);
const FINISHED = new Set(["completed", "cancelled", "failed", "interrupted"]);
const PHASES = { scope: "Scoping", plan_review: "Plan review", research: "Researching", evaluate: "Evaluating", synthesis: "Writing the report" };
const COUNTERS = [["searches", "searches"], ["sources", "sources"], ["pages_read", "pages read"], ["llm_calls", "LLM calls"]];

const $ = (id) => document.getElementById(id);

export class ResearchView {
  constructor({ onFollowUp }) {
    this.root = $("research-view");
    this.onFollowUp = onFollowUp;
    this.controller = null;
    $("r-stop").addEventListener("click", () => this.stop());
    $("r-copy").addEventListener("click", (e) => copyText(e.currentTarget, this.report));
    $("r-download").addEventListener("click", () => this.download());
    $("r-toggle-sources").addEventListener("click", (e) => {
      const open = this.root.classList.toggle("sources-hidden") === false;
      e.currentTarget.setAttribute("aria-expanded", String(open));
    });
    $("r-follow").addEventListener("submit", (e) => {
      e.preventDefault();
      const question = $("r-follow-q").value.trim();
      if (question) this.onFollowUp(question, this.sessionId);
    });
    $("r-resume").addEventListener("click", () => this.resume());
  }

  reset(id) {
    this.detach();
    Object.assign(this, {
      id, sessionId: null, query: "", mode: "deep-research", status: "running", phase: null,
      dimensions: new Map(), sources: new Map(), report: "", lastEventId: null, counters: {},
      sourcesSeen: 0, refreshing: false, pending: false,
    });
    for (const el of ["r-feed", "r-plan", "r-toc", "r-body", "r-source-list"]) $(el).replaceChildren();
    $("r-error").hidden = true;
    $("r-continue").hidden = true;
    $("r-resume").hidden = true;
    $("r-follow-q").value = "";
    this.drawCounters();
  }

  // A new run: its events from the first one.
  async start(id, { query, mode, sessionId }) {
    this.reset(id);
    Object.assign(this, { query, mode, sessionId });
    this.header();
    await this.follow();
  }

  // An existing run (reload, sidebar): its state now, then the events after it.
  async open(id) {
    this.reset(id);
    let run;
    try {
      run = await getJSON(`/v1/research/${encodeURIComponent(id)}`);
    } catch (err) {
      this.fail(err instanceof ApiError && err.status === 404 ? "This research run is no longer on the server (finished runs expire)." : err.message);
      return false;
    }
    this.apply(run);
    this.feed(`Re-attached after event ${run.last_event_id}`, "note");
    if (run.status === "running") await this.follow();
    return true;
  }

  apply(run) {
    Object.assign(this, { query: run.query, mode: run.mode, status: run.status, phase: run.phase, sessionId: run.session_id });
    this.lastEventId = run.last_event_id ?? null;
    this.header();
    this.plan(run.brief, run.dimensions || []);
    for (const finding of run.findings || []) this.finding(finding);
    this.setSources(run.sources || []);
    this.report = run.report || "";
    this.renderReport();
    this.drawCounters(run.counters || {});
    if (run.error) this.fail(run.error.message || String(run.error));
    this.finished();
  }

  header() {
    $("r-title").textContent = this.query;
    $("r-mode").textContent = this.mode === "due-diligence" ? "Due diligence" : "Deep research";
    const phase = PHASES[this.phase] || "";
    const status = this.status.charAt(0).toUpperCase() + this.status.slice(1);
    $("r-status").textContent = this.status === "running" ? phase || "Starting…" : status;
    this.root.dataset.status = this.status;
    $("r-stop").hidden = this.status !== "running";
  }

  detach() {
    if (this.controller) this.controller.abort();
    this.controller = null;
  }

  // Follow the event stream; reconnect with Last-Event-ID when it drops before the run ends.
  async follow() {
    this.detach();
    const controller = (this.controller = new AbortController());
    for (let attempt = 0; attempt < 30 && !controller.signal.aborted; attempt++) {
      let ended = false;
      try {
        const extra = this.lastEventId === null ? {} : { "Last-Event-ID": String(this.lastEventId) };
        const response = await request(`/v1/research/${encodeURIComponent(this.id)}/events`, {
          accept: "text/event-stream", signal: controller.signal, extra,
        });
        await readEvents(response, (event) => {
          if (event.id !== null) this.lastEventId = Number(event.id);
          this.on(event);
          if (TERMINAL.has(event.type) || (event.type === "state" && FINISHED.has(event.data.status))) ended = true;
        });
      } catch (err) {
        if (err.name === "AbortError") return;
        if (err instanceof ApiError && err.status >= 400 && err.status < 500) return this.fail(err.message);
      }
      if (ended) return;
      await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 500 * (attempt + 1))));
    }
  }

  on({ type, data }) {
    const dim = data.dimension ? this.dimensions.get(data.dimension) : null;
    const where = dim ? `${dim.title}: ` : "";
    switch (type) {
      case "state":
        Object.assign(this, { status: data.status, phase: data.phase ?? this.phase });
        if (data.query) Object.assign(this, { query: data.query, mode: data.mode });
        this.header();
        if (data.status !== "running") this.feed(`Run ${data.status}`, "note");
        this.finished();
        break;
      case "phase.started":
        this.phase = data.phase;
        if (data.phase !== "plan_review" && $("r-continue-now")) $("r-continue-now").remove();
        this.header();
        this.feed(`${PHASES[data.phase] || data.phase}${data.round > 1 ? ` (round ${data.round})` : ""}`, "phase");
        break;
      case "phase.completed":
        this.feed(`${PHASES[data.phase] || data.phase} done in ${seconds(data.ms || 0)}`, "done");
        break;
      case "scope.completed":
        this.plan(data.brief, data.dimensions.map((d) => ({ ...d, status: "planned" })), data.review_s);
        break;
      case "research.dimension":
        this.dimension(data);
        this.feed(`${data.title}: ${data.status}${data.added_by === "evaluation" ? " (added for a gap)" : ""}`);
        break;
      case "search.completed":
        this.feed(`${where}“${data.query}” → ${data.count} results`);
        break;
      case "judge":
        this.feed(`${where}evidence ${data.verdict}`);
        break;
      case "research.compressing":
        this.feed(`${where}compressing ${data.passages} passages`);
        break;
      case "research.finding":
        this.finding(data);
        break;
      case "research.evaluation":
        this.feed(`Coverage ${data.coverage}${data.new_dimensions.length ? `: ${data.new_dimensions.length} new dimensions` : ""}`, "phase");
        break;
      case "counters.update":
        this.drawCounters(data);
        break;
      case "report.chunk":
        this.report += data.text;
        this.renderReport(true);
        break;
      case "report.completed":
        this.setSources(data.sources || []);
        this.report = data.report;
        this.renderReport();
        break;
      case "research.completed":
        this.status = "completed";
        this.feed(`Completed in ${seconds(data.duration_ms)} · ${data.sources} sources`, "done");
        this.header();
        this.finished();
        break;
      case "research.cancelled":
        this.status = "cancelled";
        this.feed(`Stopped during ${PHASES[data.phase] || data.phase}; the partial report is kept`, "note");
        this.header();
        this.finished();
        break;
      case "warning":
        this.feed(`${where}${data.message}`, "warning");
        break;
      case "error":
        this.status = "failed";
        this.fail(data.message);
        this.header();
        this.finished();
        break;
      default:
        break;
    }
  }

  feed(text, kind = "") {
    const time = new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
    const list = $("r-feed");
    list.append(h("li", { class: `feed-item ${kind}` }, h("time", { text: time }), h("span", { text })));
    list.scrollTop = list.scrollHeight;
  }

  // A key-finding card in the activity feed.
  finding(data) {
    const dim = this.dimensions.get(data.dimension);
    const list = $("r-feed");
    list.append(h("li", { class: "feed-item finding" },
      h("time", { text: "★" }),
      h("div", {},
        h("div", { class: "finding-dim", text: `Key finding · ${(dim && dim.title) || data.title || data.dimension}` }),
        h("p", { text: data.key_finding }),
        data.sources && data.sources.length ? h("div", { class: "finding-src", text: data.sources.map((n) => `[${n}]`).join(" ") }) : null)));
    list.scrollTop = list.scrollHeight;
  }

  plan(brief, dimensions, reviewS) {
    this.dimensions = new Map(dimensions.map((d) => [d.id, { ...d }]));
    const box = $("r-plan");
    this.dimList = h("ol", { class: "dimensions" });
    const parts = [h("h3", { text: "Research plan" })];
    if (brief) parts.push(h("p", { class: "brief", text: brief }));
    parts.push(this.dimList);
    // During the plan review the run waits a moment for edits; this skips the wait.
    if (reviewS) parts.push(h("button", { type: "button", id: "r-continue-now", onclick: (e) => this.continueNow(e.currentTarget) }, "Start research now"));
    box.replaceChildren(...parts);
    this.drawDimensions();
  }

  dimension(data) {
    const old = this.dimensions.get(data.id) || {};
    this.dimensions.set(data.id, { ...old, ...data });
    this.drawDimensions();
  }

  drawDimensions() {
    if (!this.dimList) return;
    this.dimList.replaceChildren(...[...this.dimensions.values()].map((d) =>
      h("li", { class: "dimension", dataset: { status: d.status || "planned" } },
        h("span", { class: "dim-title", text: d.title }),
        h("span", { class: "dim-status", text: d.status === "done" ? `done · ${plural(d.iterations || 0, "iteration")}` : d.status || "planned" }))));
  }

  async continueNow(button) {
    button.disabled = true;
    try {
      await request(`/v1/research/${encodeURIComponent(this.id)}/continue`, { method: "POST", body: {} });
    } catch (err) {
      // 409: the review already ended on its own; nothing to do
      if (!(err instanceof ApiError && err.status === 409)) this.fail(err.message);
    }
    button.remove();
  }

  drawCounters(counters = this.counters) {
    this.counters = { ...this.counters, ...counters };
    $("r-counters").replaceChildren(...COUNTERS.map(([key, label]) =>
      h("div", { class: "counter" }, h("strong", { text: String(this.counters[key] || 0) }), h("span", { text: label }))));
    // Sources are listed in the run's state; fetch it again when the count moved.
    if ((this.counters.sources || 0) > this.sourcesSeen) this.refreshSources();
  }

  async refreshSources() {
    if (this.refreshing) return;
    this.refreshing = true;
    try {
      const run = await getJSON(`/v1/research/${encodeURIComponent(this.id)}`);
      if (run.sources && run.sources.length >= this.sources.size) this.setSources(run.sources);
    } catch {
      // the next counters update tries again
    } finally {
      setTimeout(() => (this.refreshing = false), 1000);
    }
  }

  setSources(sources) {
    this.sourcesSeen = Math.max(this.sourcesSeen, sources.length);
    this.sources = new Map(sources.map((s) => [s.n, s]));
    $("r-source-list").replaceChildren(...sources.map((s) => sourceItem(s, "r-src")));
    $("r-source-count").textContent = String(sources.length);
  }

  renderReport(streaming = false) {
    if (streaming && this.pending) return;
    const draw = () => {
      this.pending = false;
      const body = $("r-body");
      renderInto(body, this.report, this.sources, { highlight: !streaming });
      const toc = [];
      let ownContents = false;
      body.querySelectorAll("h1, h2, h3").forEach((heading, i) => {
        heading.id = `r-sec-${i}`;
        const isContents = /^(table of )?contents$/i.test(heading.textContent.trim());
        ownContents ||= isContents;
        if (heading.tagName !== "H1" && !isContents) toc.push(h("li", { class: heading.tagName.toLowerCase() }, h("a", { href: `#r-sec-${i}`, text: heading.textContent })));
      });
      // The report's own contents links point at heading slugs; send them to our ids.
      const slugs = new Map([...body.querySelectorAll("h1, h2, h3")].map((el) => [slugOf(el.textContent), el.id]));
      body.querySelectorAll('a[href^="#"]').forEach((a) => {
        const target = slugs.get(decodeURIComponent(a.getAttribute("href").slice(1)));
        if (target) a.setAttribute("href", `#${target}`);
        a.removeAttribute("target");
      });
      // The engine's report carries its own contents list; draw one only when it does not.
      const showToc = toc.length && !ownContents;
      $("r-toc").replaceChildren(...(showToc ? [h("h3", { text: "Contents" }), h("ol", {}, toc)] : []));
    };
    if (!streaming) return draw();
    this.pending = true;
    requestAnimationFrame(draw);
  }

  finished() {
    const done = this.status === "completed";
    $("r-continue").hidden = !done;
    $("r-resume").hidden = !(this.status === "interrupted" || this.status === "failed");
    $("r-stop").hidden = this.status !== "running";
    if (!done) return;
    const chips = [...this.dimensions.values()].slice(0, 3).map((d) =>
      h("button", { type: "button", class: "chip", onclick: () => {
        $("r-follow-q").value = `Tell me more about ${d.title}`;
        $("r-follow-q").focus();
      } }, d.title));
    $("r-chips").replaceChildren(...chips);
  }

  fail(message) {
    const box = $("r-error");
    box.hidden = false;
    box.textContent = message;
  }

  async stop() {
    try {
      await request(`/v1/research/${encodeURIComponent(this.id)}`, { method: "DELETE" });
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 409)) this.fail(err.message);
    }
  }

  async resume() {
    try {
      await request(`/v1/research/${encodeURIComponent(this.id)}/resume`, { method: "POST", body: {} });
      $("r-error").hidden = true;
      this.status = "running";
      this.header();
      this.finished();
      await this.follow();
    } catch (err) {
      this.fail(err.message);
    }
  }

  async download() {
    const name = `research-${this.id}.md`;
    try {
      const response = await request(`/v1/research/${encodeURIComponent(this.id)}/report.md`, { accept: "text/markdown" });
      download(name, await response.text());
    } catch {
      download(name, this.report);
    }
  }
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function slugOf(text) {
  return text.toLowerCase().trim().replace(/[^\w\s-]/g, "").replace(/\s+/g, "-");
}
