// Chart.js with only the parts the dashboard draws, loaded on the pages that need it.
import { Chart } from "chart.js";
import * as parts from "./chart-parts.js";

Chart.register(...Object.values(parts));
Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
Chart.defaults.color = "#475569";
// Charts are redrawn on live updates; animating each of those is noise on a busy dashboard.
Chart.defaults.animation = false;
Chart.defaults.maintainAspectRatio = false;

export { Chart };

// Horizontal dashed lines at given y values (archive / forget thresholds), with a label.
export function thresholdLines(lines) {
  return {
    id: "thresholds",
    afterDatasetsDraw(chart) {
      const { ctx, chartArea, scales } = chart;
      const y = scales.y;
      ctx.save();
      for (const line of lines) {
        const py = y.getPixelForValue(line.value);
        if (py < chartArea.top || py > chartArea.bottom) continue;
        ctx.strokeStyle = line.color;
        ctx.lineWidth = 1.5;
        ctx.setLineDash([6, 4]);
        ctx.beginPath();
        ctx.moveTo(chartArea.left, py);
        ctx.lineTo(chartArea.right, py);
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillStyle = line.color;
        ctx.font = "11px " + Chart.defaults.font.family;
        ctx.fillText(line.label, chartArea.right - ctx.measureText(line.label).width - 4, py - 4);
      }
      ctx.restore();
    },
  };
}

// Vertical dashed lines on a category x axis between bins (for a histogram of values in [0, 1]).
export function binThresholdLines(lines, bins) {
  return {
    id: "binThresholds",
    afterDatasetsDraw(chart) {
      const { ctx, chartArea, scales } = chart;
      const x = scales.x;
      const step = x.getPixelForValue(1) - x.getPixelForValue(0);
      ctx.save();
      for (const line of lines) {
        const px = x.getPixelForValue(0) - step / 2 + line.value * bins * step;
        ctx.strokeStyle = line.color;
        ctx.lineWidth = 1.5;
        ctx.setLineDash([6, 4]);
        ctx.beginPath();
        ctx.moveTo(px, chartArea.top);
        ctx.lineTo(px, chartArea.bottom);
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillStyle = line.color;
        ctx.font = "11px " + Chart.defaults.font.family;
        ctx.fillText(line.label, px + 4, chartArea.top + 12);
      }
      ctx.restore();
    },
  };
}

export const THRESHOLD_COLORS = { archive: "#d97706", forget: "#dc2626" };
