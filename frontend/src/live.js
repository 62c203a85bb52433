// The live feed: one WebSocket on /ws/events/ (authenticated by the session cookie), re-dispatched
// as "memory-event" window events for the page scripts and listed in the feed panel.
//
// The feed opens with the recent events the server rebuilds from stored rows, can be filtered by
// event type (kept in localStorage), and folds a run of turn.created events of one session into one
// line with a count, so a busy conversation does not push everything else out.
import { api, debounce, el, fmtDateTime, isStaff, memoryUrl, ownerId, sessionUrl, truncate } from "./util.js";

const MAX_ITEMS = 100;
const FILTER_KEY = "memory-dashboard.feed-hidden";
// The filter's event types, listed once in dashboard/feed.py and written into the page by base.html.
const EVENT_TYPES = JSON.parse(document.getElementById("feed-types")?.textContent ?? "[]");
let hidden = loadHidden();
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
    case "turn.created": {
      // Rebuilt from stored turns, one event counts a session's recent turns.
      const n = d.count || 1;
      return [
        el("span", { className: "count" }, String(n)),
        n === 1 ? " turn in " : " turns in ",
        el("a", { href: sessionUrl(d.session_id) }, "session"),
        el("span", { className: "muted" }, ` (last #${d.sequence})`),
      ];
    }
    case "session.ended":
      return [el("a", { href: sessionUrl(d.session_id) }, "session"), ` ended after ${d.turn_count} turns`];
    case "extraction.completed": {
      // Live events list the memories; the rebuilt ones (from the job's result) only count them.
      const size = (v) => (Array.isArray(v) ? v.length : Number(v) || 0);
      const parts = ["added", "updated", "superseded", "reinforced", "forgotten"]
        .filter((k) => size(d[k]))
        .map((k) => `${size(d[k])} ${k}`);
      const items = [];
      for (const key of ["added", "updated", "superseded"]) {
        for (const m of Array.isArray(d[key]) ? d[key] : []) {
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

function loadHidden() {
  try {
    const saved = JSON.parse(localStorage.getItem(FILTER_KEY) || "null");
    return new Set(Array.isArray(saved) ? saved : []);
  } catch {
    return new Set();
  }
}

function feedItem(event, at) {
  return el(
    "li",
    {
      className: `feed-item ev-${event.type.replace(/\W/g, "-")}`,
      dataset: { type: event.type, session: (event.data && event.data.session_id) || "" },
      hidden: hidden.has(event.type),
    },
    el("div", { className: "feed-meta" }, el("span", { className: "chip small" }, event.type), el("time", { datetime: at }, fmtDateTime(at).slice(5))),
    el("div", { className: "feed-text" }, describe(event)),
  );
}

// A session's turns share one line with a count, moved to the top as each new turn arrives.
function foldTurn(list, event, at) {
  const session = event.data && event.data.session_id;
  const line = [...list.children].find((li) => li.dataset.type === "turn.created" && li.dataset.session === session);
  if (!line) return false;
  const count = line.querySelector(".count");
  const n = Number(count.textContent) + (event.data.count || 1);
  count.textContent = String(n);
  count.nextSibling.textContent = " turns in ";
  line.querySelector(".feed-text .muted").textContent = ` (last #${event.data.sequence})`;
  line.querySelector("time").textContent = fmtDateTime(at).slice(5);
  list.prepend(line);
  return true;
}

function updateEmpty() {
  for (const list of document.querySelectorAll("#live-feed")) {
    const shown = [...list.children].some((item) => !item.hidden);
    for (const empty of list.parentElement.querySelectorAll("[data-feed-empty]")) empty.hidden = shown;
  }
}

function addToFeed(event, at = new Date().toISOString()) {
  for (const list of document.querySelectorAll("#live-feed")) {
    if (event.type === "turn.created" && foldTurn(list, event, at)) continue;
    list.prepend(feedItem(event, at));
    while (list.children.length > MAX_ITEMS) list.lastElementChild.remove();
  }
  updateEmpty();
}

async function prefill() {
  if (!document.getElementById("live-feed")) return;
  try {
    const recent = await api("/dashboard/api/events/recent/");
    // Oldest first, so folding and prepending build the same list live events would have.
    for (const event of recent.events.slice().reverse()) addToFeed(event, event.at);
  } catch (error) {
    console.warn("recent events", error);
  }
}

function applyFilter() {
  for (const item of document.querySelectorAll("#live-feed > li")) item.hidden = hidden.has(item.dataset.type);
  updateEmpty();
}

function buildFilters() {
  for (const box of document.querySelectorAll("[data-feed-filter]")) {
    box.replaceChildren(
      ...EVENT_TYPES.map((type) =>
        el(
          "label",
          {},
          el("input", {
            type: "checkbox",
            value: type,
            checked: !hidden.has(type),
            onchange: (e) => {
              if (e.target.checked) hidden.delete(type);
              else hidden.add(type);
              localStorage.setItem(FILTER_KEY, JSON.stringify([...hidden]));
              for (const other of document.querySelectorAll(`[data-feed-filter] input[value="${type}"]`)) other.checked = e.target.checked;
              applyFilter();
            },
          }),
          type,
        ),
      ),
    );
  }
  for (const toggle of document.querySelectorAll("[data-feed-filter-toggle]")) {
    toggle.addEventListener("click", () => {
      const box = toggle.closest(".feed, .page-head").parentElement.querySelector("[data-feed-filter]");
      box.hidden = !box.hidden;
      toggle.setAttribute("aria-expanded", String(!box.hidden));
    });
  }
}

// The moderation badge follows the queue: any memory change may move a memory in or out of it.
const refreshBadge = debounce(async () => {
  try {
    const { pending_review: n } = await api("/dashboard/api/pending-count/");
    for (const badge of document.querySelectorAll("[data-pending-count]")) {
      badge.textContent = String(n);
      badge.hidden = n === 0;
    }
  } catch {
    /* the next event tries again */
  }
}, 250);

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
    if (event.type === "memory.changed") refreshBadge();
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

export async function startLive() {
  for (const button of document.querySelectorAll("[data-feed-clear]")) {
    button.addEventListener("click", () => {
      for (const list of document.querySelectorAll("#live-feed")) list.replaceChildren();
      updateEmpty();
    });
  }
  buildFilters();
  if (!ownerId || !("WebSocket" in window)) {
    setState("unavailable");
    return;
  }
  // Recent events first, then the socket: what arrives live lands on top of them.
  await prefill();
  connect();
}
