// The core memory editor: MEMORY.md, learnings.md, USER.md and the rolling summary in CodeMirror
// (Markdown mode, bundled here: nothing is fetched from elsewhere), and the scratchpad's fields.
// Each view is saved with the version it was loaded at; a 409 means someone or something changed
// it meanwhile: nothing was saved, the person's text stays in the editor, and they choose.
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { markdown } from "@codemirror/lang-markdown";
import { defaultHighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { EditorState } from "@codemirror/state";
import { EditorView, highlightActiveLine, keymap, lineNumbers } from "@codemirror/view";
import { api, el, notify, pageData } from "../util.js";

const editors = {};
const versions = {};
const loaded = {};
let agent = "";

const KEY_OF = { "memory-md": "memory_md", "learnings-md": "learnings_md", "user-md": "user_md" };
const FILE_OF = { "memory-md": "MEMORY.md", "learnings-md": "learnings.md", "user-md": "USER.md", "rolling-summary": "rolling summary" };

function status(tab, text) {
  document.querySelector(`[data-status="${tab}"]`).textContent = text;
}

function setDirty(tab, dirty) {
  const tabButton = document.querySelector(`[data-tab="${tab}"]`);
  tabButton.classList.toggle("dirty", dirty);
  status(tab, dirty ? "unsaved changes" : "");
}

function makeEditor(tab, text) {
  const parent = document.querySelector(`[data-editor="${tab}"]`);
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: text,
      extensions: [
        lineNumbers(),
        history(),
        highlightActiveLine(),
        markdown(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        EditorView.lineWrapping,
        keymap.of([
          { key: "Mod-s", preventDefault: true, run: () => (save(tab), true) },
          ...defaultKeymap,
          ...historyKeymap,
        ]),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) setDirty(tab, update.state.doc.toString() !== loaded[tab]);
        }),
      ],
    }),
  });
  editors[tab] = view;
}

function setText(tab, text) {
  const view = editors[tab];
  loaded[tab] = text;
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
  setDirty(tab, false);
}

function fillScratchpad(pad) {
  const form = document.querySelector("[data-scratchpad]");
  form.elements.current_focus.value = pad.current_focus || "";
  form.elements.active_projects.value = (pad.active_projects || []).join("\n");
  const list = form.querySelector("[data-completions]");
  list.replaceChildren(
    ...(pad.recent_completions || []).map((done) =>
      el("li", {}, done.task, " ", el("span", { className: "muted small" }, String(done.completed_at || "").slice(0, 10))),
    ),
  );
  if (!list.children.length) list.append(el("li", { className: "muted" }, "Nothing yet."));
  versions.scratchpad = pad.version;
  loaded.scratchpad = JSON.stringify(scratchpadFields());
  setDirty("scratchpad", false);
}

function scratchpadFields() {
  const form = document.querySelector("[data-scratchpad]");
  return {
    current_focus: form.elements.current_focus.value.trim(),
    active_projects: form.elements.active_projects.value
      .split("\n")
      .map((line) => line.trim())
      .filter(Boolean),
  };
}

function fill(data) {
  for (const tab of Object.keys(KEY_OF)) {
    versions[tab] = data[KEY_OF[tab]].version;
    setText(tab, data[KEY_OF[tab]].content);
  }
  versions["rolling-summary"] = data.rolling_summary.version;
  setText("rolling-summary", data.rolling_summary.content);
  fillScratchpad(data.scratchpad);
}

function summary(changes) {
  if (!changes) return "saved";
  const parts = [];
  for (const key of ["updated", "added", "forgotten"]) {
    if ((changes[key] || []).length) parts.push(`${changes[key].length} ${key}`);
  }
  return parts.length ? parts.join(", ") : "no changes";
}

function conflict(tab, message) {
  const box = document.querySelector(`[data-conflict="${tab}"]`);
  box.replaceChildren(
    el("strong", {}, "Not saved. "),
    message,
    " Your text is still in the editor. ",
    el("button", { type: "button", className: "small", onclick: () => reload(tab) }, "Load the current version (drops your edit)"),
  );
  box.hidden = false;
}

async function save(tab) {
  const box = document.querySelector(`[data-conflict="${tab}"]`);
  box.hidden = true;
  const button = document.querySelector(`[data-save="${tab}"]`);
  button.disabled = true;
  status(tab, "saving…");
  try {
    let result;
    if (tab === "scratchpad") {
      result = await api("/dashboard/api/core/scratchpad/", {
        method: "PUT",
        body: { agent, version: versions.scratchpad, ...scratchpadFields() },
      });
      fillScratchpad(result);
      notify("Scratchpad saved.", "success");
    } else if (tab === "rolling-summary") {
      const content = editors[tab].state.doc.toString();
      result = await api("/dashboard/api/core/rolling-summary/", { method: "PUT", body: { agent, version: versions[tab], content } });
      versions[tab] = result.version;
      setText(tab, result.content);
      notify("Rolling summary saved.", "success");
    } else {
      const content = editors[tab].state.doc.toString();
      result = await api(`/dashboard/api/core/${tab}/`, { method: "PUT", body: { agent, version: versions[tab], content } });
      versions[tab] = result.version;
      setText(tab, result.content);
      notify(`${FILE_OF[tab]} saved: ${summary(result.changes)}.`, "success");
    }
    status(tab, "saved");
  } catch (error) {
    if (error.status === 409) {
      conflict(tab, error.message);
      status(tab, "changed elsewhere");
    } else {
      status(tab, error.message);
      notify(error.message, "error");
    }
  } finally {
    button.disabled = false;
  }
}

async function reload(tab) {
  const data = await api("/dashboard/api/core/", { params: { agent } });
  document.querySelector(`[data-conflict="${tab}"]`).hidden = true;
  if (tab === "scratchpad") fillScratchpad(data.scratchpad);
  else if (tab === "rolling-summary") {
    versions[tab] = data.rolling_summary.version;
    setText(tab, data.rolling_summary.content);
  } else {
    versions[tab] = data[KEY_OF[tab]].version;
    setText(tab, data[KEY_OF[tab]].content);
  }
  status(tab, "reloaded");
}

function showTab(tab) {
  for (const button of document.querySelectorAll("[data-tab]")) {
    button.setAttribute("aria-selected", String(button.dataset.tab === tab));
  }
  for (const panel of document.querySelectorAll("[data-panel]")) panel.hidden = panel.dataset.panel !== tab;
  if (editors[tab]) editors[tab].requestMeasure();
  window.history.replaceState(null, "", `${location.pathname}${location.search}#${tab}`);
}

export function init() {
  const data = pageData();
  agent = data.agent || "";
  for (const tab of [...Object.keys(KEY_OF), "rolling-summary"]) makeEditor(tab, "");
  fill(data);
  for (const button of document.querySelectorAll("[data-tab]")) button.addEventListener("click", () => showTab(button.dataset.tab));
  for (const button of document.querySelectorAll("[data-save]")) button.addEventListener("click", () => save(button.dataset.save));
  for (const button of document.querySelectorAll("[data-reload]")) button.addEventListener("click", () => reload(button.dataset.reload));
  const pad = document.querySelector("[data-scratchpad]");
  pad.addEventListener("input", () => setDirty("scratchpad", JSON.stringify(scratchpadFields()) !== loaded.scratchpad));
  pad.addEventListener("submit", (e) => e.preventDefault());
  window.addEventListener("beforeunload", (e) => {
    if (document.querySelector("[data-tab].dirty")) e.preventDefault();
  });
  const wanted = location.hash.slice(1);
  if (wanted && document.querySelector(`[data-tab="${wanted}"]`)) showTab(wanted);
  // Tests and people at the console can read what each editor holds.
  window.memoryDashboard.editors = editors;
}
