// Request analytics: stacked bars of API requests per day by kind (stored figures, see analytics/).
import { Chart } from "../charts.js";
import { pageData } from "../util.js";

const COLORS = { add: "#4f46e5", search: "#16a34a", context: "#0891b2", turns: "#d97706", import: "#db2777", other: "#94a3b8" };

export function init() {
  const data = pageData().per_day;
  new Chart(document.getElementById("chart-per-day"), {
    type: "bar",
    data: {
      labels: data.days.map((d) => d.slice(5)),
      datasets: Object.entries(data.series).map(([kind, values]) => ({ label: kind, data: values, backgroundColor: COLORS[kind] || "#64748b", stack: "all" })),
    },
    options: {
      scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } },
      plugins: { legend: { position: "bottom" } },
    },
  });
}
