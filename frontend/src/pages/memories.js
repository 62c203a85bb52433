// The memory browser: filters, hybrid search, keyset paging ("Load more"), inline edit, per-row and
// bulk actions, and rows that appear or change as live events arrive.
import { api, debounce, el, fmtDateTime, memoryUrl, notify, onLiveEvent, pageData, withOwner } from "../util.js";

const tbody = () => document.getElementById("memory-rows");
const form = () => document.getElementById("filters");
const selected = new Set();
let categories = [];
let nextCursor = null;
let mode = "list";
let lastPage = null;
let loading = false;

function currentQuery() {
  const data = new FormData(form());
  const query = {};
  for (const [key, value] of data.entries()) {
    if (key === "owner") continue;
    // An empty agent is the default agent namespace, not "any agent" (that is "*").
    if (value !== "" || key === "agent") query[key] = value;
  }
  return query;
}

function rowActions(row) {
  const actions = [];
  if (row.status === "active") actions.push(row.pinned ? "unpin" : "pin", "archive");
  if (row.status === "pending_review") actions.push("approve", "reject");
  if (["archived", "forgotten", "rejected"].includes(row.status)) actions.push("restore");
  if (row.status !== "forgotten") actions.push("forget");
  return actions;
}

function strengthBar(value) {
  const pct = Math.round(Number(value) * 100);
  return el(
    "span",
    { className: "strength", title: Number(value).toFixed(3) },
    el("span", { className: "bar" }, el("span", { className: "fill", style: `width:${pct}%` })),
    el("span", { className: "num" }, Number(value).toFixed(2)),
  );
}

// What the API's ranking made of a search result: the evidence (similarity, BM25 and their fused
// relevance) and the weights on it (importance, recency, strength).
const SCORE_PARTS = [
  ["relevance", "relevance"],
  ["similarity", "vector similarity"],
  ["bm25", "BM25"],
  ["importance", "importance"],
  ["recency", "recency"],
  ["strength", "strength"],
];

function scoreBreakdown(row) {
  const list = el("dl", { className: "kv score-parts" });
  for (const [key, label] of SCORE_PARTS) {
    if (row.scores[key] === undefined) continue;
    list.append(el("dt", {}, label), el("dd", { dataset: { score: key } }, Number(row.scores[key]).toFixed(3)));
  }
  const ranks = [
    row.scores.vector_rank ? `vector #${row.scores.vector_rank}` : "not in the vector list",
    row.scores.lexical_rank ? `full text #${row.scores.lexical_rank}` : "no word matched",
  ].join(" · ");
  list.append(el("dt", {}, "found by"), el("dd", {}, ranks));
  return el(
    "details",
    { className: "score-detail small" },
    el("summary", { className: "muted" }, `score ${Number(row.score).toFixed(3)}`),
    list,
  );
}

// A row replaced after an action or a live event keeps the search scores it was listed with.
function withScores(memory, existing) {
  const before = existing && existing.row;
  return before && before.scores && !memory.scores ? { ...memory, score: before.score, scores: before.scores } : memory;
}

function renderRow(row) {
  const tr = el("tr", { dataset: { id: row.id, status: row.status } });
  tr.row = row;
  const check = el("input", {
    type: "checkbox",
    "aria-label": "Select",
    checked: selected.has(row.id),
    onchange: (e) => {
      if (e.target.checked) selected.add(row.id);
      else selected.delete(row.id);
      updateBulkbar();
    },
  });
  const contentCell = el(
    "td",
    { className: "content-cell" },
    el("a", { href: memoryUrl(row.id), className: "mem-content" }, row.content),
    row.pinned ? el("span", { className: "chip pinned small" }, "pinned") : null,
    row.review_reason && row.status === "pending_review" ? el("div", { className: "muted small" }, row.review_reason) : null,
    row.scores ? scoreBreakdown(row) : null,
  );
  const actions = el(
    "td",
    { className: "actions" },
    el("button", { type: "button", className: "small", dataset: { edit: "1" }, title: "Edit inline", onclick: () => startEdit(tr, row) }, "Edit"),
    rowActions(row).map((action) =>
      el(
        "button",
        {
          type: "button",
          className: `small${action === "forget" || action === "reject" ? " danger" : ""}`,
          dataset: { action },
          onclick: () => act(row.id, action),
        },
        action,
      ),
    ),
  );
  tr.append(
    el("td", { className: "check" }, check),
    contentCell,
    el("td", {}, el("span", { className: `chip cat-${row.category}` }, row.category)),
    el(
      "td",
      {},
      el("span", { className: `chip status-${row.status}` }, row.status),
      row.conflict ? el("span", { className: `chip small conflict-${row.conflict}`, title: "See the memory's page for the other side" }, row.conflict) : null,
    ),
    el("td", {}, strengthBar(row.strength)),
    el("td", { className: "num" }, Number(row.importance).toFixed(2)),
    el("td", { className: "small" }, row.agent || "—"),
    el("td", { className: "small" }, row.source),
    el("td", { className: "small nowrap" }, fmtDateTime(row.updated_at)),
    actions,
  );
  return tr;
}

function startEdit(tr, row) {
  const cell = tr.querySelector(".content-cell");
  const textarea = el("textarea", { rows: 3, className: "inline-edit", "aria-label": "Content" });
  textarea.value = row.content;
  const category = el(
    "select",
    { "aria-label": "Category" },
    categories.map((c) => el("option", { value: c, selected: c === row.category }, c)),
  );
  const importance = el("input", {
    type: "number",
    min: "0",
    max: "1",
    step: "0.05",
    "aria-label": "Importance",
    value: Number(row.importance).toFixed(2),
  });
  const status = el("span", { className: "muted small" });
  const save = el("button", { type: "button", className: "primary small", dataset: { save: "1" } }, "Save");
  const cancel = el("button", { type: "button", className: "small" }, "Cancel");
  cancel.addEventListener("click", () => tr.replaceWith(renderRow(row)));
  save.addEventListener("click", async () => {
    save.disabled = true;
    try {
      const changes = {};
      if (textarea.value.trim() !== row.content) changes.content = textarea.value;
      if (category.value !== row.category) changes.category = category.value;
      if (Number(importance.value) !== Number(row.importance)) changes.importance = Number(importance.value);
      const result = await api(`/dashboard/api/memories/${row.id}/`, { method: "PATCH", body: changes });
      const updated = { ...row, ...result.memory };
      tr.replaceWith(flash(renderRow(withScores(updated, tr))));
    } catch (error) {
      status.textContent = error.message;
      save.disabled = false;
    }
  });
  cell.replaceChildren(
    textarea,
    el("div", { className: "row small" }, category, el("label", {}, "importance ", importance), save, cancel, status),
  );
  textarea.focus();
}

function flash(node) {
  node.classList.add("flash");
  setTimeout(() => node.classList.remove("flash"), 2500);
  return node;
}

async function act(id, action) {
  try {
    const result = await api(`/dashboard/api/memories/${id}/action/`, { method: "POST", body: { action } });
    replaceRow(result.memory);
  } catch (error) {
    notify(error.message, "error");
  }
}


function replaceRow(memory) {
  const existing = tbody().querySelector(`tr[data-id="${CSS.escape(memory.id)}"]`);
  if (existing) existing.replaceWith(flash(renderRow(withScores(memory, existing))));
}

function updateBulkbar() {
  const bar = document.getElementById("bulkbar");
  bar.hidden = selected.size === 0;
  document.getElementById("bulk-count").textContent = String(selected.size);
}

function setCount(page) {
  lastPage = page;
  const node = document.getElementById("result-count");
  if (page.mode === "search") {
    node.replaceChildren(`${page.count} matches (hybrid search, ${Math.round(page.took_ms)} ms)`);
    if (page.weak_hidden) {
      node.append(
        " · ",
        el(
          "button",
          {
            type: "button",
            className: "linkish small",
            id: "show-weak",
            onclick: () => {
              document.getElementById("weak-matches").value = "1";
              load();
            },
          },
          `show ${page.weak_hidden} weaker`,
        ),
      );
    }
  } else if (page.count !== null && page.count !== undefined) {
    node.textContent = page.count_capped ? `more than ${page.count.toLocaleString()} memories` : `${page.count.toLocaleString()} memories`;
  }
}

function render(page, { append = false } = {}) {
  mode = page.mode;
  nextCursor = page.next_cursor;
  const rows = page.results.map(renderRow);
  if (append) tbody().append(...rows);
  else {
    tbody().replaceChildren(...rows);
    // New rows are not selected, so "select all" is not either.
    const boxes = [...tbody().querySelectorAll("input[type=checkbox]")];
    document.getElementById("select-all").checked = boxes.length > 0 && boxes.every((b) => b.checked);
  }
  if (!append) setCount(page);
  document.getElementById("no-rows").hidden = tbody().children.length > 0;
  document.getElementById("load-more").hidden = !nextCursor;
}

async function load({ append = false } = {}) {
  if (loading) return;
  loading = true;
  try {
    const params = { ...currentQuery(), ...(append && nextCursor ? { cursor: nextCursor } : {}) };
    const page = await api("/dashboard/api/memories/", { params });
    render(page, { append });
    if (!append) {
      const url = new URL(location.href);
      url.search = new URLSearchParams(currentQuery()).toString();
      history.replaceState(null, "", withOwner(url.pathname + url.search));
    }
  } catch (error) {
    notify(error.message, "error");
  } finally {
    loading = false;
  }
}

async function bulk(action) {
  if (action === "clear") {
    selected.clear();
    for (const box of tbody().querySelectorAll("input[type=checkbox]")) box.checked = false;
    document.getElementById("select-all").checked = false;
    updateBulkbar();
    return;
  }
  if (action === "forget" && !window.confirm(`Forget ${selected.size} memories? They stay in history but are never recalled.`)) return;
  try {
    const result = await api("/dashboard/api/memories/bulk/", { method: "POST", body: { ids: [...selected], action } });
    selected.clear();
    updateBulkbar();
    await load();
    const skipped = result.skipped.length ? `, ${result.skipped.length} skipped (${result.skipped[0].reason})` : "";
    notify(`${action}: ${result.done.length} done${skipped}`, result.done.length ? "success" : "error");
  } catch (error) {
    notify(error.message, "error");
  }
}

// Does a memory that just appeared belong at the top of what is shown?
function fitsView(memory) {
  const q = currentQuery();
  if (mode !== "list" || q.q || q.cursor) return false;
  if ((q.sort || "updated") !== "updated" && q.sort !== "observed") return false;
  if (q.dir === "asc") return false;
  // A live event does not say which groups a memory is in: a group's view is reloaded, not patched.
  if (q.group) return false;
  if (q.category && q.category !== memory.category) return false;
  if (q.status && q.status !== "all" && q.status !== memory.status) return false;
  if (!q.status && memory.status === "forgotten") return false;
  if (q.source && q.source !== memory.source) return false;
  if (q.agent !== undefined && q.agent !== "*" && q.agent !== memory.agent) return false;
  if (q.min_strength && memory.strength < Number(q.min_strength)) return false;
  if (q.max_strength && memory.strength > Number(q.max_strength)) return false;
  return true;
}

async function onMemoryChanged(data) {
  const memory = data.memory;
  if (!memory || !memory.id) return;
  const existing = tbody().querySelector(`tr[data-id="${CSS.escape(memory.id)}"]`);
  if (!existing && data.action !== "added") return;
  let full;
  try {
    full = (await api(`/dashboard/api/memories/${memory.id}/`)).memory;
  } catch {
    return;
  }
  if (existing) {
    existing.replaceWith(flash(renderRow(withScores(full, existing))));
  } else if (fitsView(full)) {
    tbody().prepend(flash(renderRow(full)));
    document.getElementById("no-rows").hidden = true;
    if (lastPage && typeof lastPage.count === "number" && !lastPage.count_capped) {
      setCount({ ...lastPage, count: lastPage.count + 1 });
    }
  }
}

export function init() {
  const initial = pageData();
  categories = pageData("categories-data") || [];
  render(initial.page);
  form().addEventListener("submit", (e) => {
    e.preventDefault();
    load();
  });
  for (const control of form().querySelectorAll("select, input[type=number]")) {
    control.addEventListener("change", () => load());
  }
  // A new query starts with the strong matches again.
  form().querySelector("input[name=q]").addEventListener("input", () => (document.getElementById("weak-matches").value = ""));
  form().querySelector("input[name=q]").addEventListener("input", debounce(() => load(), 350));
  document.getElementById("load-more").addEventListener("click", () => load({ append: true }));
  document.getElementById("select-all").addEventListener("change", (e) => {
    for (const tr of tbody().querySelectorAll("tr[data-id]")) {
      const box = tr.querySelector("input[type=checkbox]");
      box.checked = e.target.checked;
      if (e.target.checked) selected.add(tr.dataset.id);
      else selected.delete(tr.dataset.id);
    }
    updateBulkbar();
  });
  for (const button of document.querySelectorAll("[data-bulk]")) {
    button.addEventListener("click", () => bulk(button.dataset.bulk));
  }
  onLiveEvent((event) => {
    if (event.type === "memory.changed") onMemoryChanged(event.data || {});
  });
}
