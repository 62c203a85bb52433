// The context-window view: the block GET /api/v1/context/ returns for a query, drawn as its token
// budget by part, the memories it holds, the short-term window and the prompt text. The figures
// are the API's own (the same selector answers /dashboard/api/context/), shown, not recomputed.
import { api, el, memoryUrl, ownerParam } from "../util.js";

const PARTS = ["instructions", "scratchpad", "pinned", "recalled"];

function query() {
  const form = document.getElementById("context-form");
  const params = {};
  for (const [key, value] of new FormData(form).entries()) {
    if (value !== "" || key === "agent") params[key] = value;
  }
  return params;
}

function drawBar(breakdown) {
  const bar = document.getElementById("budget-bar");
  const total = Math.max(breakdown.budget, breakdown.used);
  bar.replaceChildren(
    ...PARTS.filter((part) => breakdown[part] > 0).map((part) =>
      el("span", {
        className: `segment part-${part}`,
        style: `width:${((100 * breakdown[part]) / total).toFixed(3)}%`,
        title: `${part}: ${breakdown[part]} tokens`,
        dataset: { part },
      }),
    ),
  );
  bar.title = `${breakdown.used} of ${breakdown.budget} tokens`;
}

function fillBreakdown(result) {
  const b = result.breakdown;
  for (const row of document.querySelectorAll("#breakdown tr[data-part]")) {
    row.querySelector("[data-tokens]").textContent = String(b[row.dataset.part]);
  }
  const count = (kind) => result.memories.filter((m) => m.kind === kind).length;
  document.querySelector("tr[data-part='pinned'] [data-count]").textContent = `${count("pinned")} memories`;
  document.querySelector("tr[data-part='recalled'] [data-count]").textContent = `${count("recalled")} memories found for the query`;
  document.querySelector("[data-budget]").textContent = String(b.budget);
  document.querySelector("[data-prompt-tokens]").textContent = String(result.tokens);
  document.querySelector("[data-short-budget]").textContent = String(b.short_term_budget);
  drawBar(b);
}

function fillMemories(result) {
  const list = document.getElementById("context-memories");
  list.replaceChildren(
    ...result.memories.map((m) =>
      el(
        "li",
        { dataset: { id: m.id, kind: m.kind } },
        el("span", { className: `chip small part-chip-${m.kind}` }, m.kind),
        " ",
        el("a", { href: memoryUrl(m.id) }, m.content),
        el("span", { className: "muted small" }, m.kind === "pinned" ? ` · strength ${m.strength}` : ` · score ${Number(m.score).toFixed(3)}`),
      ),
    ),
  );
  if (!result.memories.length) list.append(el("li", { className: "muted" }, "No memory fits or matches."));
  const pad = result.scratchpad;
  document.getElementById("context-scratchpad").replaceChildren(
    el("dt", {}, "Current focus"),
    el("dd", {}, pad.current_focus || "—"),
    el("dt", {}, "Active projects"),
    el("dd", {}, (pad.active_projects || []).join("; ") || "—"),
  );
  const short = result.short_term;
  const box = document.getElementById("context-short");
  if (!short) {
    box.replaceChildren(el("p", { className: "muted" }, "Pick a session to see its rolling summary and the recent turns that fit."));
  } else {
    box.replaceChildren(
      el("p", { className: "small muted" }, `${short.tokens} tokens: the rolling summary and ${short.messages.length} recent turns.`),
      short.summary ? el("p", { className: "prewrap", dataset: { role: "summary" } }, short.summary) : el("p", { className: "muted" }, "No rolling summary yet."),
      el(
        "ol",
        { className: "turns compact" },
        short.messages.map((t) => el("li", { className: `turn role-${t.role}` }, el("div", { className: "muted small" }, `#${t.sequence} · ${t.role}`), el("div", { className: "turn-text" }, t.content))),
      ),
    );
  }
}

function curl(params) {
  const search = new URLSearchParams(params);
  if (ownerParam) search.set("owner", ownerParam);
  return `curl -s -H "Authorization: Token $KEY" "${location.origin}/api/v1/context/?${search}"`;
}

async function show() {
  const params = query();
  const result = await api("/dashboard/api/context/", { params });
  fillBreakdown(result);
  fillMemories(result);
  document.getElementById("context-prompt").textContent = result.system_prompt;
  document.getElementById("context-curl").textContent = curl(params);
  for (const id of ["context-result", "context-details", "context-prompt-card"]) document.getElementById(id).hidden = false;
  document.getElementById("context-result").dataset.shown = JSON.stringify(params);
}

export async function init() {
  const form = document.getElementById("context-form");
  const status = el("span", { className: "muted small", "aria-live": "polite" });
  form.append(status);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    status.textContent = "";
    show().catch((error) => {
      status.textContent = error.message;
    });
  });
  await show();
}
