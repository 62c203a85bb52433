// Decay page: the policy's curves, the effect of reinforcement, and today's strengths against the
// thresholds, all from data the server computed with memories.scoring.
import { binThresholdLines, Chart, THRESHOLD_COLORS, thresholdLines } from "../charts.js";
import { api, debounce, onLiveEvent, pageData } from "../util.js";

const LINE_COLORS = ["#0f172a", "#7c3aed", "#2563eb", "#0891b2", "#65a30d"];

function thresholds(policy) {
  return [
    { value: policy.archive_below, label: `archive < ${policy.archive_below}`, color: THRESHOLD_COLORS.archive },
    { value: policy.forget_below, label: `forget < ${policy.forget_below}`, color: THRESHOLD_COLORS.forget },
  ];
}

const lineOptions = {
  scales: {
    x: {
      title: { display: true, text: "days since the last reinforcement" },
      ticks: { autoSkip: false, maxRotation: 0, callback: (value, index) => (index % 30 === 0 ? String(index) : null) },
    },
    y: { min: 0, max: 1, title: { display: true, text: "strength" } },
  },
  plugins: { legend: { position: "bottom" } },
  elements: { point: { radius: 0 } },
};

export function init() {
  const { curves, distribution } = pageData();
  const policy = curves.policy;
  new Chart(document.getElementById("chart-curves"), {
    type: "line",
    data: {
      labels: curves.days,
      datasets: curves.curves.map((c, i) => ({
        label: `starts at ${c.initial}`,
        data: c.values,
        borderColor: LINE_COLORS[i % LINE_COLORS.length],
        borderWidth: 2,
      })),
    },
    options: lineOptions,
    plugins: [thresholdLines(thresholds(policy))],
  });
  const medium = curves.curves.find((c) => c.initial === policy.importance.medium) || curves.curves[0];
  new Chart(document.getElementById("chart-reinforced"), {
    type: "line",
    data: {
      labels: curves.days,
      datasets: [
        { label: "never used again", data: medium.values, borderColor: "#94a3b8", borderWidth: 2 },
        ...curves.reinforced.map((r, i) => ({
          label: `reinforced every ${r.every_days} days`,
          data: r.values,
          borderColor: LINE_COLORS[(i + 1) % LINE_COLORS.length],
          borderWidth: 2,
        })),
      ],
    },
    options: { ...lineOptions, scales: { ...lineOptions.scales, x: { ...lineOptions.scales.x, title: { display: true, text: "days" } } } },
    plugins: [thresholdLines(thresholds(policy))],
  });
  const bins = distribution.active.length;
  const labels = distribution.active.map((_, i) => `${distribution.edges[i].toFixed(2)}–${distribution.edges[i + 1].toFixed(2)}`);
  const histogram = new Chart(document.getElementById("chart-distribution"), {
    type: "bar",
    data: {
      labels,
      datasets: [
        { label: "active", data: distribution.active, backgroundColor: "#16a34a" },
        { label: "archived", data: distribution.archived, backgroundColor: "#94a3b8" },
      ],
    },
    options: {
      scales: {
        x: { stacked: true, title: { display: true, text: "strength" } },
        y: { stacked: true, beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: "memories" } },
      },
      plugins: { legend: { position: "bottom" } },
    },
    plugins: [binThresholdLines(thresholds(policy), bins)],
  });
  const refresh = debounce(async () => {
    const fresh = await api("/dashboard/api/strength-distribution/");
    histogram.data.datasets[0].data = fresh.active;
    histogram.data.datasets[1].data = fresh.archived;
    histogram.update();
  }, 1500);
  onLiveEvent((event) => {
    if (event.type === "memory.changed" || event.type === "lifecycle.completed") refresh();
  });
}
