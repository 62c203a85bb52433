// Memory detail: the strength curve (history and projection, thresholds drawn) and a notice when
// the memory changes elsewhere while the page is open.
import { Chart, THRESHOLD_COLORS, thresholdLines } from "../charts.js";
import { el, fmtDate, onLiveEvent, pageData } from "../util.js";

function points(list) {
  return list.map((p) => ({ x: new Date(p.t).getTime(), y: p.strength }));
}

export function init() {
  const series = pageData();
  const canvas = document.getElementById("chart-strength");
  const memoryId = location.pathname.split("/").filter(Boolean)[1];
  new Chart(canvas, {
    type: "line",
    data: {
      datasets: [
        {
          label: "recorded",
          data: points(series.past),
          borderColor: "#2563eb",
          backgroundColor: "#2563eb",
          pointRadius: 3,
        },
        {
          label: "projected (no reinforcement)",
          data: points(series.projection),
          borderColor: "#7c3aed",
          borderDash: [5, 4],
          pointRadius: 0,
        },
      ],
    },
    options: {
      parsing: false,
      scales: {
        x: { type: "linear", ticks: { callback: (v) => fmtDate(v), maxTicksLimit: 8 } },
        y: { min: 0, max: 1, title: { display: true, text: "strength" } },
      },
      plugins: {
        legend: { position: "bottom" },
        tooltip: { callbacks: { title: (items) => fmtDate(items[0].parsed.x) } },
      },
    },
    plugins: [
      thresholdLines([
        { value: series.archive_below, label: `archive < ${series.archive_below}`, color: THRESHOLD_COLORS.archive },
        { value: series.forget_below, label: `forget < ${series.forget_below}`, color: THRESHOLD_COLORS.forget },
      ]),
    ],
  });
  onLiveEvent((event) => {
    const memory = event.type === "memory.changed" && event.data && event.data.memory;
    if (!memory || memory.id !== memoryId || document.getElementById("changed-notice")) return;
    const notice = el(
      "p",
      { className: "notice", id: "changed-notice" },
      `This memory just changed (${event.data.action}). `,
      el("a", { href: location.pathname + location.search }, "Reload to see it"),
    );
    document.querySelector(".memory-main").prepend(notice);
  });
}
