// The live feed: one WebSocket on /ws/events/ (authenticated by the session cookie), re-dispatched
// as "memory-event" window events for the page scripts and listed in the feed panel.
import { el, fmtDateTime, isStaff, memoryUrl, ownerId, sessionUrl, truncate } from "./util.js";

const MAX_ITEMS = 100;
const CLOSE_UNAUTHENTICATED = 4401;
let socket = null;
let retryMs = 1000;

export const live = { state: "connecting", received: 0 };

function setState(state) {
  live.state = state;
  const dot = document.getElementById("live-status");
  if (dot) {
    dot.dataset.state = state;
    dot.title = `Live events: ${state}`;
  }
  window.dispatchEvent(new CustomEvent("live-state", { detail: state }));
}

function memoryLink(memory) {
  if (!memory || !memory.id) return "";
  return el("a", { href: memoryUrl(memory.id), className: "feed-mem" }, truncate(memory.content, 140));
}

function describe(event) {
  const d = event.data || {};
  switch (event.type) {
    case "turn.created":
      return [`turn #${d.sequence} (${d.role}) in `, el("a", { href: sessionUrl(d.session_id) }, "session")];
    case "session.ended":
      return [el("a", { href: sessionUrl(d.session_id) }, "session"), ` ended after ${d.turn_count} turns`];
    case "extraction.completed": {
      const parts = ["added", "updated", "superseded", "reinforced", "forgotten"]
        .filter((k) => (d[k] || []).length)
        .map((k) => `${d[k].length} ${k}`);
      const items = [];
      for (const key of ["added", "updated", "superseded"]) {
        for (const m of d[key] || []) {
          items.push(el("li", {}, el("span", { className: "chip small" }, key), " ", memoryLink(m)));
        }
      }
      return [
        `extraction (${d.kind || "?"}): ${parts.join(", ") || (d.skipped ? `skipped — ${d.skipped}` : "nothing new")}`,
        items.length ? el("ul", { className: "feed-sub" }, items) : null,
      ];
    }
    case "memory.changed":
      return [`${d.action}: `, memoryLink(d.memory), d.memory ? ` · ${d.memory.status}` : ""];
    case "memory.write.important":
      return ["important: ", memoryLink({ id: d.memory_id, content: d.content })];
    case "memory.contradiction":
      return [memoryLink(d.new), " contradicts ", memoryLink(d.old)];
    case "lifecycle.progress":
      return [`lifecycle: ${d.step || ""} ${d.status || ""}`.trim()];
    case "lifecycle.completed": {
      const counts = d.counts ? Object.entries(d.counts).map(([k, v]) => `${k} ${v}`).join(", ") : "";
      return [`lifecycle ${d.status || "completed"}${counts ? ` — ${counts}` : ""}`];
    }
    case "notification": {
      const inner = d.event || {};
      const memory = inner.memory_id ? { id: inner.memory_id, content: inner.content } : inner.memory;
      return [`rule "${d.rule || "?"}" on ${d.event_type || "event"}`, memory ? ": " : "", memoryLink(memory)];
    }
    default:
      return [truncate(JSON.stringify(d), 200)];
  }
}

function addToFeed(event) {
  const now = new Date().toISOString();
  for (const list of document.querySelectorAll("#live-feed")) {
    const item = el(
      "li",
      { className: `feed-item ev-${event.type.replace(/\W/g, "-")}`, dataset: { type: event.type } },
      el("div", { className: "feed-meta" }, el("span", { className: "chip small" }, event.type), " ", el("time", {}, fmtDateTime(now).slice(11))),
      el("div", { className: "feed-text" }, describe(event)),
    );
    list.prepend(item);
    while (list.children.length > MAX_ITEMS) list.lastElementChild.remove();
  }
  for (const empty of document.querySelectorAll("[data-feed-empty]")) empty.hidden = true;
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  try {
    socket = new WebSocket(`${scheme}://${location.host}/ws/events/`);
  } catch {
    setState("unavailable");
    return;
  }
  setState("connecting");
  socket.addEventListener("open", () => {
    retryMs = 1000;
    setState("open");
  });
  socket.addEventListener("message", (message) => {
    let event;
    try {
      event = JSON.parse(message.data);
    } catch {
      return;
    }
    if (!event || typeof event.type !== "string") return;
    // Staff receive every owner's events; the pages show the owner being looked at.
    if (isStaff && event.owner_id !== undefined && String(event.owner_id) !== String(ownerId)) return;
    live.received += 1;
    addToFeed(event);
    window.dispatchEvent(new CustomEvent("memory-event", { detail: event }));
  });
  socket.addEventListener("close", (close) => {
    socket = null;
    if (close.code === CLOSE_UNAUTHENTICATED) {
      setState("logged-out");
      return;
    }
    setState("closed");
    setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 15000);
  });
}

export function startLive() {
  for (const button of document.querySelectorAll("[data-feed-clear]")) {
    button.addEventListener("click", () => {
      for (const list of document.querySelectorAll("#live-feed")) list.replaceChildren();
      for (const empty of document.querySelectorAll("[data-feed-empty]")) empty.hidden = false;
    });
  }
  if (!ownerId || !("WebSocket" in window)) {
    setState("unavailable");
    return;
  }
  connect();
}
