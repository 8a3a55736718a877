// The source policy's control (docs/sources.md): "only these sites" and "never these sites",
// kept in this browser and sent as options.domains with every question and research run.
// `site:` and `-site:` typed in the question box need nothing here: the server parses them.
import { h } from "./dom.js";

const KEY = "quarry.domains";

function load() {
  try {
    const saved = JSON.parse(localStorage.getItem(KEY) || "{}");
    return { allow: String(saved.allow || ""), deny: String(saved.deny || "") };
  } catch {
    return { allow: "", deny: "" };
  }
}

function entries(text) {
  return text.split(/[\s,]+/).filter(Boolean);
}

let current = load();

// Add `options.domains` to a request body when either list has an entry; else leave it as is.
export function withDomains(body) {
  const allow = entries(current.allow);
  const deny = entries(current.deny);
  if (!allow.length && !deny.length) return body;
  return { ...body, options: { ...(body.options || {}), domains: { allow, deny } } };
}

// A line for a `policy` event that dropped something, else null.
export function policyNote(data) {
  const dropped = data.dropped || [];
  if (!dropped.length) return null;
  const hosts = [...new Set(dropped.map((d) => d.host))].sort().join(", ");
  return `The source policy dropped ${dropped.length} result(s) from ${hosts}.`;
}

function field(id, label, hint, value, onInput) {
  const input = h("input", { id, type: "text", value, autocomplete: "off", spellcheck: "false", placeholder: hint, oninput: onInput });
  // Enter here must not submit the question form around it.
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") e.preventDefault();
  });
  return h("label", { class: "domains-field", for: id }, h("span", { text: label }), input);
}

function summaryText() {
  const count = entries(current.allow).length + entries(current.deny).length;
  return count ? `Sites (${count})` : "Sites";
}

// The control, first in the composer: a "Sites" toggle opening a small panel above it.
export function installDomains(form) {
  const summary = h("summary", { text: summaryText(), title: "Only or never these sites" });
  const save = () => {
    current = { allow: $allow.querySelector("input").value, deny: $deny.querySelector("input").value };
    localStorage.setItem(KEY, JSON.stringify(current));
    summary.textContent = summaryText();
  };
  const $allow = field("domains-allow", "Only these sites", "python.org, *.example.com", current.allow, save);
  const $deny = field("domains-deny", "Never these sites", "example.com", current.deny, save);
  const panel = h(
    "div",
    { class: "domains-panel" },
    $allow,
    $deny,
    h("p", { class: "domains-hint", text: "A domain covers its subdomains. site: and -site: in the question work too." }),
  );
  const details = h("details", { id: "domains", class: "domains" }, summary, panel);
  form.prepend(details);
  return details;
}
