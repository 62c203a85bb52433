import { Chart } from "../charts.js";
import { api, CATEGORY_COLORS, debounce, notify, onLiveEvent, pageData, STATUS_COLORS } from "../util.js";

const CATEGORIES = Object.keys(CATEGORY_COLORS);
const STATUSES = Object.keys(STATUS_COLORS);
let charts = {};

function get(obj, path) {
  return path.split(".").reduce((o, k) => (o === null || o === undefined ? undefined : o[k]), obj);
}

function formatMetric(value, format) {
  if (value === null || value === undefined) return format === "ms" || format === "pct" ? "—" : "0";
  if (format === "fixed2") return Number(value).toFixed(2);
  if (format === "ms") return `${Number(value).toFixed(1)} ms`;
  if (format === "pct") return `${Math.round(Number(value) * 100)}%`;
  return String(value);
}

function updateNumbers(metrics) {
  for (const node of document.querySelectorAll("[data-metric]")) {
    node.textContent = formatMetric(get(metrics, node.dataset.metric), node.dataset.format);
  }
}

function categoryData(metrics) {
  return CATEGORIES.map((c) => metrics.memories.by_category[c] || 0);
}

function statusData(metrics) {
  return STATUSES.map((s) => metrics.memories.by_status[s] || 0);
}

function draw(data) {
  const { metrics, activity } = data;
  charts.category = new Chart(document.getElementById("chart-category"), {
    type: "bar",
    data: {
      labels: CATEGORIES,
      datasets: [{ label: "memories", data: categoryData(metrics), backgroundColor: CATEGORIES.map((c) => CATEGORY_COLORS[c]) }],
    },
    options: { plugins: { legend: { display: false } }, scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } },
  });
  charts.status = new Chart(document.getElementById("chart-status"), {
    type: "doughnut",
    data: {
      labels: STATUSES,
      datasets: [{ data: statusData(metrics), backgroundColor: STATUSES.map((s) => STATUS_COLORS[s]) }],
    },
    options: { plugins: { legend: { position: "right" } } },
  });
  charts.activity = new Chart(document.getElementById("chart-activity"), {
    type: "bar",
    data: {
      labels: activity.days.map((d) => d.slice(5)),
      datasets: [
        { label: "added", data: activity.added, backgroundColor: "#16a34a" },
        { label: "updated", data: activity.updated, backgroundColor: "#2563eb" },
        { label: "forgotten", data: activity.forgotten, backgroundColor: "#64748b" },
      ],
    },
    options: {
      scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } },
      plugins: { legend: { position: "bottom" } },
    },
  });
}

function refreshCharts(data) {
  charts.category.data.datasets[0].data = categoryData(data.metrics);
  charts.status.data.datasets[0].data = statusData(data.metrics);
  charts.activity.data.labels = data.activity.days.map((d) => d.slice(5));
  charts.activity.data.datasets[0].data = data.activity.added;
  charts.activity.data.datasets[1].data = data.activity.updated;
  charts.activity.data.datasets[2].data = data.activity.forgotten;
  for (const chart of Object.values(charts)) chart.update();
}

const refresh = debounce(async () => {
  try {
    const data = await api("/dashboard/api/overview/");
    updateNumbers(data.metrics);
    refreshCharts(data);
  } catch (error) {
    console.warn("overview refresh failed", error);
  }
}, 1000);

async function runLifecycle(button) {
  button.disabled = true;
  try {
    const run = await api("/dashboard/api/lifecycle/run/", { method: "POST", body: {} });
    const counts = Object.entries(run.counts || {}).map(([k, v]) => `${k} ${v}`);
    notify(`Lifecycle run ${run.status}${counts.length ? `: ${counts.join(", ")}` : ""}.`);
    refresh();
  } catch (error) {
    notify(error.message, "error");
  } finally {
    button.disabled = false;
  }
}

export function init() {
  draw(pageData());
  const button = document.getElementById("lifecycle-run");
  button.addEventListener("click", () => runLifecycle(button));
  onLiveEvent((event) => {
    if (["memory.changed", "extraction.completed", "lifecycle.completed", "session.ended"].includes(event.type)) refresh();
  });
}
