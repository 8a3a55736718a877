// The options sent with every question (POST /v1/search's `options`): mode, answer length and
// sources from the selects under the question box, kept in this browser. An empty choice sends
// nothing, so the server's default applies. Other panels add their own options with
// addOptions(() => ({ ... })) and their controls to #composer-options.

const KEY = "quarry.options";
const SELECTS = { mode: "opt-mode", detail: "opt-detail", sources: "opt-sources" };
const extra = [];

function saved() {
  try {
    return JSON.parse(localStorage.getItem(KEY) || "{}");
  } catch {
    return {};
  }
}

// Register a function whose result (an object of options) is merged into every question's.
export function addOptions(fn) {
  extra.push(fn);
}

// Restore the last choices and keep each change.
export function installOptions() {
  const values = saved();
  for (const [name, id] of Object.entries(SELECTS)) {
    const select = document.getElementById(id);
    if (!select) continue;
    // a value this page no longer offers falls back to the server default
    if ([...select.options].some((o) => o.value === values[name])) select.value = values[name];
    select.addEventListener("change", () => {
      localStorage.setItem(KEY, JSON.stringify({ ...saved(), [name]: select.value }));
    });
  }
}

// The options of the next question.
export function collect() {
  const out = {};
  for (const [name, id] of Object.entries(SELECTS)) {
    const select = document.getElementById(id);
    const value = select ? select.value : "";
    if (!value) continue;
    out[name] = name === "sources" ? value.split(",") : value;
  }
  for (const fn of extra) Object.assign(out, fn() || {});
  return out;
}
