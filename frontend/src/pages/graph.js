// The memory graph on a canvas (cytoscape): memories coloured by category and sized by strength,
// entities as grey diamonds, contradicts / supersedes edges in red / orange. Small graphs get a
// force-directed layout; large ones a category-clustered layout computed here in linear time, so a
// few thousand nodes open in about a second.
import cytoscape from "cytoscape";
import { api, CATEGORY_COLORS, el, memoryUrl, truncate } from "../util.js";

const FORCE_LAYOUT_MAX = 300;
let cy = null;

function categoryLayout(nodes, edges) {
  // Each category is a sunflower-seed disc placed on a ring; entities sit near the memories they
  // are mentioned by.
  const positions = {};
  const byCategory = {};
  for (const node of nodes) {
    if (node.kind === "memory") (byCategory[node.category] ||= []).push(node);
  }
  const cats = Object.keys(byCategory);
  const largest = Math.max(1, ...cats.map((c) => byCategory[c].length));
  const discRadius = (n) => 18 * Math.sqrt(n) + 30;
  const ring = cats.length > 1 ? (discRadius(largest) * 2.4 * cats.length) / (2 * Math.PI) + discRadius(largest) : 0;
  const golden = Math.PI * (3 - Math.sqrt(5));
  cats.forEach((cat, i) => {
    const angle = (2 * Math.PI * i) / cats.length;
    const cx = ring * Math.cos(angle);
    const cyy = ring * Math.sin(angle);
    byCategory[cat]
      .sort((a, b) => b.strength - a.strength)
      .forEach((node, k) => {
        const r = 18 * Math.sqrt(k);
        positions[node.id] = { x: cx + r * Math.cos(k * golden), y: cyy + r * Math.sin(k * golden) };
      });
  });
  const neighbours = {};
  for (const edge of edges) {
    if (edge.type === "mentions") (neighbours[edge.target] ||= []).push(edge.source);
  }
  let j = 0;
  for (const node of nodes) {
    if (node.kind !== "entity") continue;
    const linked = (neighbours[node.id] || []).map((id) => positions[id]).filter(Boolean);
    const base = linked.length
      ? { x: linked.reduce((s, p) => s + p.x, 0) / linked.length, y: linked.reduce((s, p) => s + p.y, 0) / linked.length }
      : { x: 0, y: 0 };
    j += 1;
    positions[node.id] = { x: base.x + 25 * Math.cos(j * golden), y: base.y + 25 * Math.sin(j * golden) };
  }
  return positions;
}

// Measuring thousands of labels dominates drawing a big graph, so there a label shows only for the
// node under the pointer and its neighbours.
function style(big) {
  return [
    {
      selector: "node",
      style: {
        "background-color": "#64748b",
        label: big ? "" : "data(short)",
        "font-size": 9,
        color: "#0f172a",
        "text-valign": "bottom",
        "text-margin-y": 3,
        "min-zoomed-font-size": 8,
      },
    },
    { selector: "node.labelled", style: { label: "data(short)", "z-index": 20 } },
    ...Object.entries(CATEGORY_COLORS).map(([cat, color]) => ({
      selector: `node[kind = "memory"][category = "${cat}"]`,
      style: { "background-color": color },
    })),
    {
      selector: 'node[kind = "memory"]',
      style: { width: "mapData(strength, 0, 1, 8, 30)", height: "mapData(strength, 0, 1, 8, 30)" },
    },
    { selector: 'node[status = "archived"]', style: { opacity: 0.45 } },
    { selector: 'node[status = "pending_review"]', style: { "border-width": 3, "border-color": "#f59e0b" } },
    { selector: "node[?pinned]", style: { "border-width": 3, "border-color": "#0f172a" } },
    {
      selector: 'node[kind = "entity"]',
      style: { shape: "diamond", "background-color": "#cbd5e1", "border-width": 1, "border-color": "#64748b", width: 14, height: 14 },
    },
    { selector: "edge", style: { width: 1, "line-color": "#cbd5e1", "curve-style": big ? "haystack" : "straight", opacity: 0.8 } },
    { selector: 'edge[type = "mentions"]', style: { "line-color": "#e2e8f0", width: 0.8 } },
    {
      selector: 'edge[type = "contradicts"]',
      style: { "curve-style": "straight", "line-color": "#dc2626", width: 3, "target-arrow-shape": "tee", "target-arrow-color": "#dc2626", opacity: 1, "z-index": 10 },
    },
    {
      selector: 'edge[type = "supersedes"]',
      style: { "curve-style": "straight", "line-color": "#ea580c", width: 2, "line-style": "dashed", "target-arrow-shape": "triangle", "target-arrow-color": "#ea580c" },
    },
    { selector: 'edge[type = "supports"], edge[type = "refines"]', style: { "line-color": "#16a34a" } },
    { selector: "node:selected", style: { "border-width": 3, "border-color": "#111827" } },
    { selector: ".faded", style: { opacity: 0.12 } },
  ];
}

function status(text) {
  document.getElementById("graph-status").textContent = text;
}

async function draw() {
  const formNode = document.getElementById("graph-filters");
  const data = new FormData(formNode);
  const categories = data.getAll("category");
  const showEntities = data.get("entities") === "on";
  status("Loading…");
  const graph = await api("/dashboard/api/graph/", {
    params: { categories: categories.join(","), limit: data.get("limit") || "" },
  });
  const nodes = graph.nodes.filter((n) => showEntities || n.kind === "memory");
  const ids = new Set(nodes.map((n) => n.id));
  const edges = graph.edges.filter((e) => ids.has(e.source) && ids.has(e.target));
  const big = nodes.length > FORCE_LAYOUT_MAX;
  const positions = big ? categoryLayout(nodes, edges) : null;
  const elements = [
    ...nodes.map((n) => ({
      group: "nodes",
      data: { ...n, short: truncate(n.label, 40) },
      position: positions ? positions[n.id] : undefined,
    })),
    ...edges.map((e) => ({ group: "edges", data: e })),
  ];
  if (cy) cy.destroy();
  const container = document.getElementById("graph");
  container.dataset.nodes = String(nodes.length);
  cy = cytoscape({
    container,
    elements,
    style: style(big),
    layout: big
      ? { name: "preset", fit: true, padding: 30 }
      : { name: "cose", animate: false, fit: true, padding: 30, numIter: 600, randomizeSeed: 1, nodeRepulsion: () => 9000 },
    minZoom: 0.05,
    maxZoom: 4,
    textureOnViewport: big,
    hideEdgesOnViewport: nodes.length > 1500,
    motionBlur: false,
  });
  const tip = document.getElementById("graph-tip");
  cy.on("tap", 'node[kind = "memory"]', (event) => {
    location.href = memoryUrl(event.target.id());
  });
  cy.on("mouseover", "node", (event) => {
    const d = event.target.data();
    tip.replaceChildren(
      el("strong", {}, d.kind === "memory" ? d.category : d.entity_kind || "entity"),
      el("div", {}, truncate(d.label, 200)),
      d.kind === "memory" ? el("div", { className: "muted" }, `${d.status} · strength ${d.strength}`) : null,
    );
    tip.hidden = false;
    const neighbourhood = event.target.closedNeighborhood();
    cy.batch(() => {
      // Restyling every element on each hover is too slow for a big graph.
      if (!big) cy.elements().not(neighbourhood).addClass("faded");
      neighbourhood.nodes().addClass("labelled");
    });
  });
  cy.on("mouseout", "node", () => {
    tip.hidden = true;
    cy.batch(() => (big ? cy.nodes(".labelled") : cy.elements()).removeClass("faded labelled"));
  });
  const contradictions = edges.filter((e) => e.type === "contradicts").length;
  status(
    `${graph.memory_count} memories${graph.truncated ? " (strongest shown)" : ""}, ` +
      `${nodes.length - graph.memory_count >= 0 ? nodes.length - graph.memory_count : 0} entities, ${edges.length} edges` +
      (contradictions ? `, ${contradictions} contradictions` : ""),
  );
  container.dataset.drawn = "1";
}

export async function init() {
  const formNode = document.getElementById("graph-filters");
  formNode.addEventListener("submit", (e) => {
    e.preventDefault();
    draw().catch((error) => status(error.message));
  });
  for (const box of formNode.querySelectorAll("input[type=checkbox]")) {
    box.addEventListener("change", () => draw().catch((error) => status(error.message)));
  }
  document.getElementById("graph-fit").addEventListener("click", () => cy && cy.fit(undefined, 30));
  try {
    await draw();
  } catch (error) {
    status(error.message);
  }
}
