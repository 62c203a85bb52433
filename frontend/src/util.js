// Shared helpers. Every piece of memory text reaches the page through textContent (el() below
// never parses HTML), so content such as "<img onerror=…>" is shown, not run.

export const body = document.body;
export const ownerParam = body.dataset.owner || "";
export const ownerId = body.dataset.ownerId || "";
export const isStaff = body.dataset.staff === "1";

export function withOwner(path) {
  if (!ownerParam) return path;
  const url = new URL(path, location.origin);
  url.searchParams.set("owner", ownerParam);
  return url.pathname + url.search + url.hash;
}

function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.content : "";
}

export class ApiError extends Error {
  constructor(message, status, code) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export async function api(path, { method = "GET", body: payload, params } = {}) {
  const url = new URL(withOwner(path), location.origin);
  if (params) {
    for (const [key, value] of Object.entries(params)) {
      if (value !== undefined && value !== null && (value !== "" || key === "agent")) url.searchParams.set(key, value);
    }
  }
  const init = { method, headers: { Accept: "application/json" }, credentials: "same-origin" };
  if (payload !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(payload);
  }
  if (method !== "GET") init.headers["X-CSRFToken"] = csrfToken();
  const response = await fetch(url, init);
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) {
    const error = data && data.error ? data.error : { message: `HTTP ${response.status}`, code: "http" };
    throw new ApiError(error.message, response.status, error.code);
  }
  return data;
}

// el("a", {href: "/x", className: "y", dataset: {id: 1}, onclick: fn}, "text", otherNode)
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "className") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key in node && typeof value !== "string") node[key] = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function pageData(id = "page-data") {
  const node = document.getElementById(id);
  return node ? JSON.parse(node.textContent) : null;
}

export function memoryUrl(id) {
  return withOwner(`/memories/${encodeURIComponent(id)}/`);
}

export function sessionUrl(id) {
  return withOwner(`/sessions/${encodeURIComponent(id)}/`);
}

export function fmtDateTime(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "—";
  return d.toISOString().slice(0, 16).replace("T", " ");
}

export function fmtDate(value) {
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? "" : d.toISOString().slice(0, 10);
}

export function truncate(text, n) {
  const s = String(text ?? "");
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

export function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

export function onLiveEvent(handler) {
  window.addEventListener("memory-event", (e) => handler(e.detail));
}

export const CATEGORY_COLORS = {
  preference: "#7c3aed",
  fact: "#2563eb",
  project: "#0891b2",
  decision: "#059669",
  workflow: "#65a30d",
  skill: "#ca8a04",
  error: "#dc2626",
  rule: "#db2777",
  todo: "#ea580c",
};

export const STATUS_COLORS = {
  active: "#16a34a",
  archived: "#94a3b8",
  pending_review: "#f59e0b",
  rejected: "#7f1d1d",
  forgotten: "#334155",
};

// A short notice in the corner: "success" in green, "error" in red, "info" in blue.
export function notify(message, kind = "success", ms = 5000) {
  const box = document.getElementById("toasts");
  if (!box) return null;
  const toast = el("div", { className: `toast msg-${kind}`, role: kind === "error" ? "alert" : "status" }, message);
  box.append(toast);
  setTimeout(() => toast.remove(), ms);
  return toast;
}
