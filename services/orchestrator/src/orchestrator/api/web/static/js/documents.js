// Your documents: a panel listing them (GET /v1/corpus/documents), removing one (DELETE),
// uploading files (POST /v1/corpus/files, multipart, with the browser's upload progress), and
// pinning the next questions to a folder or file (options.scope on POST /v1/search).

import { getJSON, request } from "./api.js";
import { h } from "./dom.js";

const TOKEN_KEY = "quarry.token";
const ACCEPT = ".pdf,.html,.htm,.xhtml,.md,.markdown,.txt";
let scope = sessionStorage.getItem("quarry.scope") || "";
let chip = null;

// The request body with the pinned scope, if any (quick.js sends it with every question).
export function withScope(body) {
  return scope ? { ...body, options: { ...(body.options || {}), scope } } : body;
}

function pin(path) {
  scope = path || "";
  if (scope) sessionStorage.setItem("quarry.scope", scope);
  else sessionStorage.removeItem("quarry.scope");
  drawChip();
}

function drawChip() {
  if (!chip) return;
  chip.hidden = !scope;
  chip.replaceChildren(
    h("span", { text: "Pinned to " }),
    h("code", { class: "scope-path", text: scope }),
    h("button", { type: "button", class: "unpin", "aria-label": `Unpin ${scope}`, onclick: () => pin("") }, "Unpin"),
  );
}

function size(n) {
  if (n < 1024) return `${n} B`;
  return n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function folderOf(path) {
  return path.slice(0, path.lastIndexOf("/")) || "/";
}

// POST the files with XMLHttpRequest: fetch() cannot report upload progress.
function send(files, onProgress) {
  return new Promise((resolve, reject) => {
    const form = new FormData();
    for (const file of files) form.append("file", file, file.name);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/v1/corpus/files");
    xhr.setRequestHeader("Accept", "application/json");
    const token = localStorage.getItem(TOKEN_KEY);
    if (token) xhr.setRequestHeader("Authorization", `Bearer ${token}`);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      let body = {};
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        // not JSON: the status says enough
      }
      if (xhr.status === 201) resolve(body);
      else reject(new Error(body.detail || body.title || `HTTP ${xhr.status}`));
    };
    xhr.onerror = () => reject(new Error("Cannot reach the Quarry server. Is it running?"));
    xhr.send(form);
  });
}

class Panel {
  constructor(dialog) {
    this.dialog = dialog;
    this.list = h("ul", { class: "doc-list", "aria-label": "Documents" });
    this.status = h("p", { class: "doc-status", role: "status", "aria-live": "polite" });
    this.error = h("p", { class: "error", role: "alert", hidden: true });
    this.progress = h("progress", { max: "1", value: "0", hidden: true, "aria-label": "Upload progress" });
    this.input = h("input", { type: "file", id: "doc-files", multiple: true, accept: ACCEPT, class: "sr-only", onchange: () => this.upload([...this.input.files]) });
    const drop = h(
      "div",
      { class: "drop", id: "doc-drop" },
      h("p", { text: "Drop PDF, HTML, Markdown or text files here, or " }),
      h("label", { for: "doc-files", class: "pick" }, "choose files"),
      this.input,
    );
    drop.addEventListener("dragover", (e) => {
      e.preventDefault();
      drop.classList.add("over");
    });
    drop.addEventListener("dragleave", () => drop.classList.remove("over"));
    drop.addEventListener("drop", (e) => {
      e.preventDefault();
      drop.classList.remove("over");
      this.upload([...e.dataTransfer.files]);
    });
    dialog.replaceChildren(
      h(
        "div",
        { class: "doc-panel" },
        h("header", {}, h("h2", { id: "docs-title", text: "Your documents" }), h("button", { type: "button", onclick: () => dialog.close() }, "Close")),
        drop,
        this.progress,
        this.status,
        this.error,
        this.list,
      ),
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
  }

  async load() {
    try {
      const page = await getJSON("/v1/corpus/documents?limit=100");
      this.draw(page);
    } catch (err) {
      this.say("", `Could not list the documents: ${err.message}`);
    }
  }

  draw(page) {
    const rows = page.documents.map((d) => {
      const name = d.path.split("/").pop();
      const facts = [d.type.toUpperCase(), size(d.size), `${d.passages} passages`];
      if (d.pages) facts.push(`${d.pages} pages`);
      if (d.indexed_at) facts.push(`indexed ${d.indexed_at.replace("T", " ").replace("Z", " UTC")}`);
      if (d.uploaded) facts.push("uploaded");
      return h(
        "li",
        { class: "doc", dataset: { id: d.id } },
        h("div", { class: "doc-name", title: d.path, text: name }),
        h("div", { class: "doc-facts", text: facts.join(" · ") }),
        h(
          "div",
          { class: "doc-actions" },
          h("button", { type: "button", "aria-label": `Pin questions to ${name}`, onclick: () => this.pin(d.path) }, "Pin"),
          h("button", { type: "button", "aria-label": `Pin questions to the folder of ${name}`, onclick: () => this.pin(folderOf(d.path)) }, "Pin folder"),
          h("button", { type: "button", class: "danger", "aria-label": `Remove ${name}`, onclick: () => this.remove(d) }, "Remove"),
        ),
      );
    });
    this.list.replaceChildren(...rows);
    this.say(page.total ? `${page.total} documents` : "No documents yet: add some above.");
  }

  pin(path) {
    pin(path);
    this.dialog.close();
    document.getElementById("q")?.focus();
  }

  async remove(doc) {
    const name = doc.path.split("/").pop();
    try {
      await request(`/v1/corpus/documents/${doc.id}`, { method: "DELETE" });
      if (scope === doc.path) pin("");
      this.say(`Removed ${name}.`);
      await this.load();
      this.say(`Removed ${name}.`);
    } catch (err) {
      this.say("", `Could not remove ${name}: ${err.message}`);
    }
  }

  async upload(files) {
    if (!files.length) return;
    this.progress.hidden = false;
    this.progress.value = 0;
    this.say(`Uploading ${files.length} file(s)…`);
    try {
      const done = await send(files, (share) => {
        this.progress.value = share;
        if (share >= 1) this.say("Indexing…");
      });
      await this.load();
      this.say(`Added ${done.files.map((f) => f.name).join(", ")}: ready to ask about.`);
    } catch (err) {
      this.say("", `Not added: ${err.message}`);
    } finally {
      this.progress.hidden = true;
      this.input.value = "";
    }
  }
}

// Wire the sidebar's Documents button to the panel, and show the pinned scope above the
// question box.
export function installDocuments({ button, dialog, before }) {
  const panel = new Panel(dialog);
  button.addEventListener("click", () => panel.open());
  chip = h("div", { id: "scope-pin", class: "scope-pin", role: "status" });
  before.before(chip);
  drawChip();
}
