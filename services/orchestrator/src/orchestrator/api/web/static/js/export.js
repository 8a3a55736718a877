// The download menu of a research report or a conversation: every export format and the run
// bundle, fetched with the caller's token (a plain link could not send it) and saved as a file.

import { request } from "./api.js";
import { h } from "./dom.js";

export const FORMATS = [
  ["md", "Markdown (.md)"],
  ["html", "Web page (.html)"],
  ["pdf", "PDF (.pdf)"],
  ["json", "JSON (.json)"],
  ["bibtex", "Sources as BibTeX (.bib)"],
  ["ris", "Sources as RIS (.ris)"],
];

// The file name the server gave (Content-Disposition), else ``fallback``.
function filenameOf(response, fallback) {
  const match = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") || "");
  return match ? match[1] : fallback;
}

async function save(path, fallback, status) {
  status.textContent = "Preparing…";
  try {
    const response = await request(path, { accept: "*/*" });
    const url = URL.createObjectURL(await response.blob());
    const a = h("a", { href: url, download: filenameOf(response, fallback) });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
    status.textContent = "";
  } catch (err) {
    status.textContent = `Download failed: ${err.message}`;
  }
}

// Fill ``container`` with the menu; ``base()`` gives the resource's path (/v1/research/ID or
// /v1/sessions/ID), or null when nothing is open.
export function installExportMenu(container, base) {
  const status = h("span", { class: "export-status", role: "status", "aria-live": "polite" });
  const item = (label, suffix, fallback) =>
    h("li", {}, h("button", {
      type: "button",
      role: "menuitem",
      text: label,
      onclick: () => {
        const path = base();
        if (path) save(`${path}/${suffix}`, fallback, status);
        menu.open = false;
      },
    }));
  const menu = h(
    "details",
    { class: "export-menu" },
    h("summary", { text: "Download" }),
    h("ul", { role: "menu" },
      FORMATS.map(([fmt, label]) => item(label, `export?format=${fmt}`, `quarry.${fmt}`)),
      item("Run bundle (.zip)", "bundle", "quarry.bundle.zip")),
  );
  container.replaceChildren(menu, status);
  return menu;
}
