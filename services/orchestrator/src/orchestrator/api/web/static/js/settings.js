// The settings panel: GET /v1/settings fills a form, Save sends only what changed as
// PATCH /v1/settings (the next question uses it). Secrets are write-only: the form shows
// whether one is set, never its value; an empty secret field leaves it unchanged.

import { ApiError, getJSON, request } from "./api.js";
import { h } from "./dom.js";

const FIELDS = [
  { name: "web_search", label: "Web search", options: ["on", "off"] },
  { name: "search_backends", label: "Search backends", options: ["searxng", "brave", "searxng,brave", "brave,searxng"] },
  { name: "searxng_url", label: "SearXNG instances (comma-separated URLs)", type: "text" },
  { name: "brave_api_key", label: "Brave Search API key", type: "password", secret: true },
  { name: "top_urls", label: "Results per search", type: "number", min: 1, max: 50 },
  { name: "mode", label: "Default mode", options: ["auto", "speed", "balanced", "quality"] },
  { name: "agent", label: "Agent mode (tool-calling models)", options: ["off", "on", "auto"] },
  { name: "llm_provider", label: "Model provider", options: ["openai", "ollama"] },
  { name: "llm_base_url", label: "Model endpoint URL", type: "text" },
  { name: "llm_model", label: "Model name", type: "text" },
  { name: "llm_api_key", label: "Model API key", type: "password", secret: true },
];

function control(field, id) {
  if (field.options) {
    return h("select", { id, name: field.name }, field.options.map((o) => h("option", { value: o }, o)));
  }
  const attrs = { id, name: field.name, type: field.type, autocomplete: "off" };
  if (field.min !== undefined) Object.assign(attrs, { min: String(field.min), max: String(field.max) });
  return h("input", attrs);
}

function privacyNotice(privacy) {
  return h("div", { class: "privacy", id: "settings-privacy" }, [
    h("h3", {}, "What leaves this machine"),
    h("ul", {}, privacy.leaves_the_machine.map((line) => h("li", {}, line))),
    h("h3", {}, "Recommendations"),
    h("ul", {}, privacy.recommendations.map((line) => h("li", {}, line))),
  ]);
}

export class SettingsPanel {
  constructor(dialog) {
    this.dialog = dialog;
    this.form = dialog.querySelector("form");
    this.body = dialog.querySelector("#settings-fields");
    this.status = dialog.querySelector("#settings-status");
    this.loaded = {};
    this.form.addEventListener("submit", (event) => {
      if (event.submitter && event.submitter.value === "save") {
        event.preventDefault();
        this.save();
      }
    });
  }

  async open() {
    this.status.textContent = "";
    try {
      this.render(await getJSON("/v1/settings"));
    } catch (err) {
      this.status.textContent = err instanceof ApiError ? err.message : "Could not load the settings.";
    }
    this.dialog.showModal();
  }

  render(view) {
    this.loaded = view.settings;
    const rows = FIELDS.map((field) => {
      const id = `setting-${field.name}`;
      const input = control(field, id);
      if (field.secret) {
        input.placeholder = view.secrets[field.name] ? "set (type to replace)" : "not set";
      } else {
        input.value = String(view.settings[field.name] ?? "");
      }
      input.disabled = !view.editable;
      const env = h("small", {}, view.env[field.name] + (view.overridden.includes(field.name) ? " (changed here)" : ""));
      return h("div", { class: "setting" }, [h("label", { for: id }, field.label), input, env]);
    });
    this.body.replaceChildren(...rows, privacyNotice(view.privacy));
    this.form.querySelector("button[value=save]").disabled = !view.editable;
    if (!view.editable) this.status.textContent = "Only an admin can change settings.";
  }

  changes() {
    const out = {};
    for (const field of FIELDS) {
      const input = this.form.elements[field.name];
      if (!input) continue;
      if (field.secret) {
        if (input.value) out[field.name] = input.value;
        continue;
      }
      const value = field.type === "number" ? Number(input.value) : input.value;
      if (String(value) !== String(this.loaded[field.name] ?? "")) out[field.name] = value;
    }
    return out;
  }

  async save() {
    const body = this.changes();
    if (!Object.keys(body).length) {
      this.dialog.close();
      return;
    }
    try {
      await request("/v1/settings", { method: "PATCH", body });
      this.status.textContent = "Saved: the next question uses these settings.";
      this.dialog.close("saved");
    } catch (err) {
      this.status.textContent = err instanceof ApiError ? err.message : "Could not save the settings.";
    }
  }
}

export function installSettings(button, dialog) {
  const panel = new SettingsPanel(dialog);
  button.addEventListener("click", () => panel.open());
  return panel;
}
