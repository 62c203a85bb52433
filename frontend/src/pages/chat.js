// Web chat: turns go to the session through the dashboard API; "New chat" ends the session, and the
// memories its consolidation extracts appear beside the chat from the extraction.completed event
// (or, when the live socket is not connected, from polling the session's extracted memories).
import { live } from "../live.js";
import { api, el, memoryUrl, onLiveEvent, pageData } from "../util.js";

const POLL_MS = 1000;
const POLL_LIMIT_MS = 60000;
let sessionId = null;
const watched = new Set();
const shown = new Set();
// Turn-level extraction can finish before the first message's response names its new session.
const early = [];

const log = () => document.getElementById("chat-log");
const statusLine = (text) => {
  document.getElementById("chat-status").textContent = text;
};

function bubble(role, text, note) {
  const item = el(
    "li",
    { className: `bubble ${role}`, dataset: { role } },
    el("div", { className: "bubble-text" }, text),
    note ? el("div", { className: "bubble-note" }, note) : null,
  );
  log().append(item);
  log().scrollTop = log().scrollHeight;
  return item;
}

function showContext(memories) {
  const list = document.getElementById("chat-context");
  if (!memories.length) {
    list.replaceChildren(el("li", { className: "muted" }, "none"));
    return;
  }
  list.replaceChildren(
    ...memories.map((m) =>
      el(
        "li",
        {},
        el("span", { className: `chip small cat-${m.category}` }, m.category || m.kind || "memory"),
        " ",
        el("a", { href: memoryUrl(m.id) }, m.content),
      ),
    ),
  );
}

function showExtracted(kind, memory) {
  const key = `${kind}:${memory.id}`;
  if (shown.has(key)) return;
  shown.add(key);
  const list = document.getElementById("chat-extracted");
  list.prepend(
    el(
      "li",
      { className: "flash", dataset: { id: memory.id, kind } },
      el("span", { className: "chip small" }, kind),
      " ",
      el("span", { className: `chip small cat-${memory.category}` }, memory.category || ""),
      " ",
      el("a", { href: memoryUrl(memory.id), className: "extracted-content" }, memory.content),
    ),
  );
}

function onExtraction(data) {
  if (!watched.has(data.session_id)) {
    early.push(data);
    if (early.length > 20) early.shift();
    return;
  }
  for (const kind of ["added", "updated", "superseded", "reinforced"]) {
    for (const memory of data[kind] || []) showExtracted(kind, memory);
  }
  if (data.kind === "session_end") {
    const n = (data.added || []).length + (data.updated || []).length + (data.superseded || []).length;
    const reinforced = (data.reinforced || []).length;
    let text = `Chat ended: ${n} memories added or updated`;
    if (reinforced) text += `, ${reinforced} reinforced`;
    if (data.skipped) text = `Chat ended: ${data.skipped}`;
    else if (!n && !reinforced) text = "Chat ended: nothing new beyond what was extracted while you talked";
    statusLine(`${text}.`);
  }
}

async function pollExtracted(id) {
  const started = Date.now();
  while (Date.now() - started < POLL_LIMIT_MS) {
    if (live.state === "open") return; // the event will come over the socket
    try {
      const result = await api(`/dashboard/api/chat/${id}/extracted/`);
      for (const memory of result.memories) showExtracted("added", memory);
      if (result.consolidated) {
        statusLine(`Chat ended: ${result.memories.length} memories from it.`);
        return;
      }
    } catch (error) {
      statusLine(error.message);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function send(message) {
  const input = document.getElementById("chat-input");
  const button = document.getElementById("chat-send");
  bubble("user", message);
  input.value = "";
  button.disabled = true;
  statusLine("Thinking…");
  try {
    const result = await api("/dashboard/api/chat/send/", { method: "POST", body: { session_id: sessionId, message } });
    sessionId = result.session_id;
    watched.add(sessionId);
    for (const data of early.splice(0)) onExtraction(data);
    const note = result.responder === "offline" ? "offline responder" : `LLM${result.tools_used.length ? ` · tools: ${result.tools_used.join(", ")}` : ""}`;
    bubble("assistant", result.reply, note);
    const used = [...result.context_memories, ...result.recalled.filter((r) => !result.context_memories.some((c) => c.id === r.id))];
    showContext(used);
    statusLine("");
  } catch (error) {
    bubble("error", error.message);
    statusLine("");
  } finally {
    button.disabled = false;
    input.focus();
  }
}

async function newChat() {
  const button = document.getElementById("new-chat");
  if (!sessionId) {
    log().replaceChildren();
    statusLine("New chat.");
    return;
  }
  const ending = sessionId;
  button.disabled = true;
  statusLine("Ending the chat and extracting memories…");
  try {
    watched.add(ending);
    await api("/dashboard/api/chat/end/", { method: "POST", body: { session_id: ending } });
    sessionId = null;
    log().replaceChildren();
    showContext([]);
    if (live.state !== "open") pollExtracted(ending);
  } catch (error) {
    statusLine(error.message);
  } finally {
    button.disabled = false;
  }
}

export function init() {
  const state = pageData();
  sessionId = state.session_id;
  if (sessionId) watched.add(sessionId);
  for (const turn of state.turns) bubble(turn.role, turn.content);
  const form = document.getElementById("chat-form");
  const input = document.getElementById("chat-input");
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const message = input.value.trim();
    if (message) send(message);
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  document.getElementById("new-chat").addEventListener("click", newChat);
  onLiveEvent((event) => {
    if (event.type === "extraction.completed") onExtraction(event.data || {});
  });
}
