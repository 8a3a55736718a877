// Markdown from the model (and anything from web pages) becomes DOM only through marked and
// then DOMPurify; citation badges and source cards are built with textContent, never HTML.
// Code blocks are highlighted by highlight.js (vendored), its markup purified again.

const { marked, DOMPurify, hljs } = window;

marked.use({ gfm: true, breaks: false });

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  // Links from an answer open elsewhere and tell the target nothing about Quarry.
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer nofollow");
  }
});

const PURIFY = {
  USE_PROFILE: { html: true },
  // Remote images would call home from a private answer (the CSP blocks them too); forms and
  // buttons from a model have nothing to do in an answer.
  FORBID_TAGS: ["img", "style", "form", "input", "button", "textarea", "select", "video", "audio"],
  FORBID_ATTR: ["style", "id", "name"],
};

const CITE = /\[(\d{1,3})\]/g;
const HAS_CITE = /\[\d{1,3}\]/;

export function sanitize(markdown) {
  return DOMPurify.sanitize(marked.parse(markdown || ""), PURIFY);
}

export function hostOf(source) {
  if (source.origin === "local" || source.url.startsWith("local:")) {
    const path = source.url.replace(/^local:/, "");
    const pages = source.pages?.length ? ` · p. ${source.pages.join(", ")}` : "";
    return `local · ${path.split("/").pop()}${pages}`;
  }
  try {
    return new URL(source.url).hostname.replace(/^www\./, "");
  } catch {
    return source.url;
  }
}

// The texts the model saw for a source (``passages``), else its excerpt.
export function passagesOf(source) {
  const list = (Array.isArray(source.passages) ? source.passages : [])
    .map((p) => (typeof p === "string" ? p : p && p.text))
    .filter(Boolean);
  return list.length ? list : [source.excerpt || ""];
}

export function passageOf(source) {
  return passagesOf(source)[0];
}

export function safeHref(url) {
  return /^https?:\/\//i.test(url) ? url : null;
}

const cardOf = new WeakMap();

function badge(n, source) {
  const sup = document.createElement("sup");
  const button = document.createElement("button");
  button.type = "button";
  button.className = "cite";
  button.textContent = String(n);
  button.dataset.n = String(n);
  button.setAttribute("aria-label", `Source ${n}: ${source.title || hostOf(source)}`);
  button.setAttribute("aria-describedby", "source-card");
  cardOf.set(button, source);
  sup.append(button);
  return sup;
}

// Replace [n] in text nodes (not in code) with badges for the sources that exist.
function addBadges(root, sources) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    // text right under the fragment has no parent element; it is never inside code
    acceptNode: (node) =>
      node.parentElement && node.parentElement.closest("code, pre") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
  });
  const nodes = [];
  while (walker.nextNode()) if (HAS_CITE.test(walker.currentNode.data)) nodes.push(walker.currentNode);
  for (const node of nodes) {
    const parts = [];
    let last = 0;
    for (const match of node.data.matchAll(CITE)) {
      const source = sources.get(Number(match[1]));
      if (!source) continue;
      parts.push(node.data.slice(last, match.index), badge(Number(match[1]), source));
      last = match.index + match[0].length;
    }
    if (!parts.length) continue;
    parts.push(node.data.slice(last));
    node.replaceWith(...parts);
  }
}

// highlight.js escapes the code it wraps in <span class="hljs-…">; what it returns is purified
// once more down to exactly that, so a bug there cannot put markup from a model on the page.
const CODE_PURIFY = { ALLOWED_TAGS: ["span"], ALLOWED_ATTR: ["class"] };
// Beyond this, guessing the language of an unlabelled block costs more than it shows.
const MAX_HIGHLIGHT = 20000;

// Highlight every code block under ``root`` (its ```lang label, else highlight.js's guess).
export function highlightCode(root) {
  if (!hljs) return;
  for (const code of root.querySelectorAll("pre > code")) {
    const text = code.textContent;
    if (!text.trim() || text.length > MAX_HIGHLIGHT) continue;
    const label = /\blanguage-([\w+#.-]+)/.exec(code.className);
    const known = label && hljs.getLanguage(label[1]);
    const result = known
      ? hljs.highlight(text, { language: label[1], ignoreIllegals: true })
      : hljs.highlightAuto(text);
    code.innerHTML = DOMPurify.sanitize(result.value, CODE_PURIFY);
    code.classList.add("hljs");
    if (result.language) code.dataset.language = result.language;
  }
}

// Render ``markdown`` into ``element`` with badges for ``sources`` (a Map n → source);
// ``highlight``: colour the code blocks (for a finished text, not on every streamed frame).
export function renderInto(element, markdown, sources, { highlight = false } = {}) {
  const template = document.createElement("template");
  template.innerHTML = sanitize(markdown);
  if (highlight) highlightCode(template.content);
  addBadges(template.content, sources || new Map());
  element.replaceChildren(template.content);
}

// The one floating source card: hover or focus a badge to see domain, title and passage.
export function installSourceCard(card) {
  let current = null;
  const hide = () => {
    card.hidden = true;
    current = null;
  };
  const show = (button) => {
    const source = cardOf.get(button);
    if (!source) return;
    current = button;
    const host = document.createElement("div");
    host.className = "card-host";
    host.textContent = `${hostOf(source)} · ${source.origin === "local" ? "local" : "web"}`;
    const title = document.createElement("div");
    title.className = "card-title";
    title.textContent = `[${source.n}] ${source.title || source.url}`;
    // the quoted spans the model saw (the first few; the card scrolls)
    const quotes = passagesOf(source).slice(0, 3).map((text) => {
      const quote = document.createElement("blockquote");
      quote.textContent = text;
      return quote;
    });
    card.replaceChildren(host, title, ...quotes);
    card.hidden = false;
    const rect = button.getBoundingClientRect();
    const width = Math.min(360, window.innerWidth - 16);
    card.style.width = `${width}px`;
    card.style.left = `${Math.max(8, Math.min(rect.left, window.innerWidth - width - 8))}px`;
    const below = rect.bottom + 8;
    const height = card.offsetHeight;
    card.style.top = `${below + height > window.innerHeight ? Math.max(8, rect.top - height - 8) : below}px`;
  };
  const target = (event) => event.target.closest && event.target.closest("button.cite");
  document.addEventListener("mouseover", (e) => target(e) && show(target(e)));
  document.addEventListener("mouseout", (e) => target(e) === current && hide());
  document.addEventListener("focusin", (e) => (target(e) ? show(target(e)) : current && hide()));
  document.addEventListener("focusout", (e) => target(e) === current && hide());
  document.addEventListener("keydown", (e) => e.key === "Escape" && current && hide());
  window.addEventListener("scroll", hide, true);
  // A click (or tap) also brings the numbered source into view and highlights it.
  document.addEventListener("click", (e) => {
    const button = target(e);
    const scope = button && button.closest(".turn, #research-view");
    const item = scope && scope.querySelector(`.source[id$="-src-${button.dataset.n}"]`);
    if (!item) return;
    item.scrollIntoView({ block: "nearest" });
    item.classList.add("flash");
    setTimeout(() => item.classList.remove("flash"), 1500);
  });
}

const MARKS = {
  unsupported: { symbol: "\u25cc", title: "No source supports this sentence" },
  partly: { symbol: "\u25d0", title: "Its source supports only part of this sentence" },
};

// The words of a sentence as they show on the page: no [n], no Markdown emphasis or code marks.
function plainWords(text) {
  return text.replace(CITE, " ").replace(/[*_`#>]/g, " ").split(/\s+/).filter(Boolean);
}

// A quiet mark after each sentence its sources support only partly or not at all
// (``sentences`` from answer.completed: {text, support}); supported sentences get none.
export function markSentences(root, sentences) {
  for (const sentence of sentences || []) {
    const mark = MARKS[sentence.support];
    if (!mark) continue;
    const words = plainWords(sentence.text);
    if (!words.length) continue;
    const tail = words.slice(-4).join(" ").replace(/[.!?:;,]+$/, "");
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const node = walker.currentNode;
      const at = node.data.indexOf(tail);
      if (at < 0 || (node.parentElement && node.parentElement.closest("code, pre"))) continue;
      let end = at + tail.length;
      while (end < node.data.length && ".!?:;,".includes(node.data[end])) end += 1;
      const after = node.splitText(end);
      const sign = document.createElement("span");
      sign.className = `support support-${sentence.support}`;
      sign.textContent = mark.symbol;
      sign.title = mark.title;
      sign.setAttribute("role", "img");
      sign.setAttribute("aria-label", mark.title);
      after.parentNode.insertBefore(sign, after);
      break;
    }
  }
}
