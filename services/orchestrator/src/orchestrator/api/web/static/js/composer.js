// The question box: Enter asks, Shift+Enter is a new line; "/" opens the slash commands that
// pick a research mode, shown as a pill (Backspace at the start of the box clears it).

import { h } from "./dom.js";

export const COMMANDS = [
  { mode: "deep-research", command: "/deep-research", label: "Deep research", hint: "a long report with cited sources" },
  { mode: "due-diligence", command: "/due-diligence", label: "Due diligence", hint: "validation, risks and recommendations" },
];

export class Composer {
  constructor(form, { onSubmit, onStop }) {
    this.form = form;
    this.input = form.querySelector("#q");
    this.menu = form.querySelector("#slash-menu");
    this.pill = form.querySelector("#mode-pill");
    this.ask = form.querySelector("#ask");
    this.stop = form.querySelector("#stop");
    this.mode = null;
    this.matches = [];
    this.active = 0;
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.submit(onSubmit);
    });
    this.stop.addEventListener("click", () => onStop());
    this.input.addEventListener("input", () => this.update());
    this.input.addEventListener("keydown", (e) => this.key(e, onSubmit));
    this.input.addEventListener("blur", () => setTimeout(() => this.close(), 150));
  }

  submit(onSubmit) {
    const query = this.input.value.trim();
    if (!query || this.ask.hidden) return;
    this.close();
    onSubmit(query, this.mode);
  }

  busy(running) {
    this.ask.hidden = running;
    this.stop.hidden = !running;
    this.form.dataset.busy = running ? "true" : "false";
  }

  clear() {
    this.input.value = "";
    this.setMode(null);
  }

  update() {
    const value = this.input.value;
    const match = /^\/([\w-]*)$/.exec(value);
    this.matches = match ? COMMANDS.filter((c) => c.command.startsWith(`/${match[1]}`)) : [];
    if (!this.matches.length) return this.close();
    this.active = Math.min(this.active, this.matches.length - 1);
    this.draw();
  }

  draw() {
    this.menu.replaceChildren(...this.matches.map((c, i) =>
      h("li", {
        id: `cmd-${c.mode}`,
        role: "option",
        class: "command",
        "aria-selected": i === this.active ? "true" : "false",
        onmousedown: (e) => {
          e.preventDefault();
          this.choose(c);
        },
      }, h("span", { class: "command-name", text: c.command }), h("span", { class: "command-hint", text: c.hint }))));
    this.menu.hidden = false;
    this.input.setAttribute("aria-expanded", "true");
    this.input.setAttribute("aria-activedescendant", `cmd-${this.matches[this.active].mode}`);
  }

  close() {
    this.menu.hidden = true;
    this.matches = [];
    this.active = 0;
    this.input.setAttribute("aria-expanded", "false");
    this.input.removeAttribute("aria-activedescendant");
  }

  choose(command) {
    this.input.value = "";
    this.setMode(command.mode);
    this.close();
    this.input.focus();
  }

  setMode(mode) {
    this.mode = mode;
    const command = COMMANDS.find((c) => c.mode === mode);
    this.pill.hidden = !command;
    this.pill.textContent = command ? command.label : "";
    this.input.placeholder = command ? `${command.label}: what should the report cover?` : "Ask anything (/ for research)";
  }

  key(e, onSubmit) {
    const open = !this.menu.hidden && this.matches.length;
    if (open && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
      e.preventDefault();
      const step = e.key === "ArrowDown" ? 1 : -1;
      this.active = (this.active + step + this.matches.length) % this.matches.length;
      this.draw();
    } else if (open && (e.key === "Tab" || e.key === "Enter")) {
      e.preventDefault();
      this.choose(this.matches[this.active]);
    } else if (open && e.key === "Escape") {
      e.preventDefault();
      this.close();
    } else if (e.key === "Backspace" && this.mode && this.input.selectionStart === 0 && this.input.selectionEnd === 0) {
      e.preventDefault();
      this.setMode(null);
    } else if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      this.submit(onSubmit);
    }
  }
}
