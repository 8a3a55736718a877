// Research that runs itself: a panel listing the saved questions (GET /v1/schedules) with their
// timetable and last run (a link to its report), a form to add one, and per schedule: run now,
// pause/resume, edit, delete. The sidebar button says when a run finished since the panel was
// last opened (polled once a minute; the timestamp seen is kept in this browser).

import { getJSON, request } from "./api.js";
import { h } from "./dom.js";

const SEEN_KEY = "quarry.schedules.seen";
const POLL_MS = 60_000;

function when(epoch) {
  return epoch ? new Date(epoch * 1000).toLocaleString() : "—";
}

function zone() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

function changesText(changes) {
  if (!changes) return "";
  const parts = [
    [changes.added_sources?.length, "new sources"],
    [changes.dropped_sources?.length, "dropped"],
    [changes.added_claims?.length, "new claims"],
  ].filter(([n]) => n);
  return parts.length ? parts.map(([n, what]) => `${n} ${what}`).join(", ") : "no change";
}

class Panel {
  constructor(dialog, button) {
    this.dialog = dialog;
    this.button = button;
    this.label = button.textContent;
    this.list = h("ul", { class: "doc-list", "aria-label": "Schedules" });
    this.status = h("p", { class: "doc-status", role: "status", "aria-live": "polite" });
    this.error = h("p", { class: "error", role: "alert", hidden: true });
    this.form = this.buildForm();
    dialog.replaceChildren(
      h(
        "div",
        { class: "doc-panel" },
        h("header", {}, h("h2", { id: "schedules-title", text: "Scheduled research" }), h("button", { type: "button", onclick: () => dialog.close() }, "Close")),
        this.form,
        this.status,
        this.error,
        this.list,
      ),
    );
  }

  buildForm() {
    const field = (id, label, attrs) => h("label", { for: id, class: "sched-field" }, label, h("input", { id, ...attrs }));
    return h(
      "form",
      { class: "sched-form", onsubmit: (e) => this.create(e) },
      field("sched-query", "Question", { required: true, maxlength: "2000", placeholder: "What is new in battery recycling?" }),
      field("sched-cron", "When", { required: true, value: "daily", maxlength: "120", title: "daily, weekly, hourly or a cron expression like 0 6 * * 1-5" }),
      field("sched-zone", "Time zone", { required: true, value: zone(), maxlength: "64" }),
      field("sched-hook", "Webhook URL (optional)", { type: "url", maxlength: "2048" }),
      field("sched-secret", "Webhook secret", { type: "password", minlength: "16", maxlength: "256", autocomplete: "off" }),
      h("button", { type: "submit", class: "primary" }, "Add schedule"),
    );
  }

  say(text, error = "") {
    this.status.textContent = text;
    this.error.textContent = error;
    this.error.hidden = !error;
  }

  async open() {
    if (!this.dialog.open) this.dialog.showModal();
    await this.load();
    localStorage.setItem(SEEN_KEY, String(Date.now() / 1000));
    this.badge(0);
  }

  badge(count) {
    this.button.textContent = count ? `${this.label} (${count} new)` : this.label;
  }

  // The sidebar's notice: runs finished since the panel was last opened.
  async poll() {
    try {
      const page = await getJSON("/v1/schedules?limit=100");
      const seen = Number(localStorage.getItem(SEEN_KEY) || 0);
      this.badge(page.schedules.filter((s) => s.last_run && s.last_run.at > seen).length);
    } catch {
      // no research on this server, or no token yet: no notice
    }
  }

  async load() {
    try {
      const page = await getJSON("/v1/schedules?limit=100");
      this.draw(page);
    } catch (err) {
      this.say("", `Could not list the schedules: ${err.message}`);
    }
  }

  draw(page) {
    const rows = page.schedules.map((s) => {
      const facts = [`${s.cron} (${s.timezone})`, s.paused ? "paused" : `next ${when(s.next_run_at)}`];
      if (s.running_id) facts.push("running now");
      const last = s.last_run
        ? h("span", {}, `last run ${when(s.last_run.at)}: ${s.last_run.status} `, h("a", { href: `/?r=${encodeURIComponent(s.last_run.research_id)}` }, "open report"), s.last_changes ? ` · ${changesText(s.last_changes)}` : "")
        : h("span", { text: "no run yet" });
      return h(
        "li",
        { class: "doc", dataset: { id: s.id } },
        h("div", { class: "doc-name", text: s.name }),
        h("div", { class: "doc-facts" }, facts.join(" · "), " · ", last, s.last_error ? h("span", { class: "error", text: ` ${s.last_error}` }) : null),
        h(
          "div",
          { class: "doc-actions" },
          h("button", { type: "button", "aria-label": `Run ${s.name} now`, onclick: () => this.act(s, "run") }, "Run now"),
          h("button", { type: "button", onclick: () => this.act(s, s.paused ? "resume" : "pause") }, s.paused ? "Resume" : "Pause"),
          h("button", { type: "button", "aria-label": `Edit ${s.name}`, onclick: () => this.edit(s) }, "Edit"),
          h("button", { type: "button", class: "danger", "aria-label": `Delete ${s.name}`, onclick: () => this.act(s, "delete") }, "Delete"),
        ),
      );
    });
    this.list.replaceChildren(...rows);
    this.say(page.total ? `${page.total} schedules` : "No schedules yet: add a question above.");
  }

  async create(e) {
    e.preventDefault();
    const v = (id) => this.form.querySelector(`#${id}`).value.trim();
    const body = { query: v("sched-query"), cron: v("sched-cron"), timezone: v("sched-zone") };
    if (v("sched-hook")) body.webhook = { url: v("sched-hook"), secret: v("sched-secret") };
    try {
      await request("/v1/schedules", { method: "POST", body });
      this.form.querySelector("#sched-query").value = "";
      this.form.querySelector("#sched-secret").value = "";
      await this.load();
      this.say("Schedule added.");
    } catch (err) {
      this.say("", `Not added: ${err.message}`);
    }
  }

  async edit(s) {
    const query = prompt("Question", s.query);
    if (query === null) return;
    const cron = prompt("When (daily, weekly, hourly or cron)", s.cron);
    if (cron === null) return;
    await this.send(s, "PATCH", `/v1/schedules/${s.id}`, { query, cron }, "Saved.");
  }

  async act(s, what) {
    const path = `/v1/schedules/${s.id}`;
    if (what === "run") return this.send(s, "POST", `${path}/run`, {}, "Started: it will show here when it ends.");
    if (what === "pause") return this.send(s, "PATCH", path, { paused: true }, "Paused.");
    if (what === "resume") return this.send(s, "PATCH", path, { paused: false }, "Resumed.");
    if (!confirm(`Delete the schedule "${s.name}"? Its reports stay.`)) return;
    return this.send(s, "DELETE", path, undefined, "Deleted.");
  }

  async send(s, method, path, body, done) {
    try {
      await request(path, { method, body });
      await this.load();
      this.say(done);
    } catch (err) {
      this.say("", `${s.name}: ${err.message}`);
    }
  }
}

// Wire the sidebar's Schedules button to the panel and start the notice's polling.
export function installSchedules({ button, dialog }) {
  const panel = new Panel(dialog, button);
  button.addEventListener("click", () => panel.open());
  panel.poll();
  setInterval(() => panel.poll(), POLL_MS);
}
