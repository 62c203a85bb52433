// Entry point: the live feed on every page, then the script of the page being shown (loaded on
// demand, so chart.js and cytoscape are fetched only where they draw).
import { live, startLive } from "./live.js";

const pages = {
  overview: () => import("./pages/overview.js"),
  memories: () => import("./pages/memories.js"),
  memory: () => import("./pages/memory.js"),
  decay: () => import("./pages/decay.js"),
  graph: () => import("./pages/graph.js"),
  chat: () => import("./pages/chat.js"),
  moderation: () => import("./pages/moderation.js"),
  core: () => import("./pages/core.js"),
  context: () => import("./pages/context.js"),
  analytics: () => import("./pages/analytics.js"),
  "settings-keys": () => import("./pages/settings.js"),
  "settings-webhooks": () => import("./pages/settings.js"),
  import: () => import("./pages/import.js"),
};

window.memoryDashboard = { live };

// Below 1000 px the navigation is a drawer opened by the menu button (style.css).
function setupMenu() {
  const button = document.getElementById("menu-button");
  const backdrop = document.getElementById("nav-backdrop");
  if (!button) return;
  const open = (state) => {
    document.body.classList.toggle("nav-open", state);
    button.setAttribute("aria-expanded", String(state));
    backdrop.hidden = !state;
  };
  button.addEventListener("click", () => open(!document.body.classList.contains("nav-open")));
  backdrop.addEventListener("click", () => open(false));
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape") open(false);
  });
}

setupMenu();

for (const select of document.querySelectorAll("select[data-autosubmit]")) {
  select.addEventListener("change", () => select.form.submit());
}

startLive();

const load = pages[document.body.dataset.page];
if (load) {
  load()
    .then((module) => module.init())
    .then(() => {
      document.body.dataset.ready = "1";
    })
    .catch((error) => {
      console.error(error);
      document.body.dataset.ready = "error";
    });
} else {
  document.body.dataset.ready = "1";
}
