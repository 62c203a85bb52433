// The Chart.js parts the dashboard draws with, listed once: charts.js registers every one of them,
// and the bundle carries only these.
export {
  ArcElement,
  BarController,
  BarElement,
  CategoryScale,
  DoughnutController,
  Filler,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from "chart.js";
