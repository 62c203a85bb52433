// The memory graph on a canvas (cytoscape): memories coloured by category and sized by strength,
// entities as grey diamonds, contradicts / supersedes edges in red / orange.
//
// Readability: the server leaves out memories with no link (counted in the status line); labels are
// placed here, most important node first, only where they overlap no other label (their background
// lets the nodes under them show through), at a constant size on screen, so zooming in shows more
// of them; a fit never zooms past
// MAX_FIT_ZOOM, so two nodes do not fill the screen. Small graphs get a force-directed layout, large
// ones a category-clustered layout computed in linear time, a neighbourhood rings around its memory.
import cytoscape from "cytoscape";
import { api, CATEGORY_COLORS, el, memoryUrl, truncate } from "../util.js";

const FORCE_LAYOUT_MAX = 300;
const MAX_FIT_ZOOM = 1.5;
const FIT_PADDING = 40;
const FONT_PX = 11;
const FONT_FAMILY = "Helvetica, Arial, sans-serif";
const LABEL_CHARS = 36;
const LABEL_GAP = 3; // between a node and its label, in screen pixels
const LABEL_PAD = 2; // kept clear around each label
const LABEL_BOUNDS_MODEL = 2;
let cy = null;
let entitiesLoaded = false;
let drawing = 0; // only the latest of overlapping draws is drawn

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

function style() {
  return [
    {
      selector: "node",
      style: {
        "background-color": "#64748b",
        label: "",
        color: "#0f172a",
        "font-family": FONT_FAMILY,
        "text-valign": "bottom",
        "text-halign": "center",
        "text-wrap": "none",
      },
    },
    {
      selector: "node.labelled",
      style: {
        label: "data(short)",
        "font-size": "data(fontSize)",
        "text-margin-y": "data(labelGap)",
        "text-background-color": "#fcfcfd",
        "text-background-opacity": 0.7,
        "z-index": 20,
      },
    },
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
    { selector: "node.focus", style: { "border-width": 4, "border-color": "#111827", width: 34, height: 34 } },
    { selector: "node.match", style: { "border-width": 3, "border-color": "#2563eb" } },
    { selector: "edge", style: { width: 1, "line-color": "#cbd5e1", "curve-style": "haystack", opacity: 0.8 } },
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

// --- labels -------------------------------------------------------------------------------------

const measureContext = document.createElement("canvas").getContext("2d");
measureContext.font = `${FONT_PX}px ${FONT_FAMILY}`;
const widths = new Map();

function labelWidth(text) {
  if (!widths.has(text)) widths.set(text, Math.ceil(measureContext.measureText(text).width));
  return widths.get(text);
}

// A uniform grid over the screen: each box is filed under the cells it covers, so a collision test
// looks at a few neighbours, not at every placed box.
class BoxGrid {
  constructor(cell = 48) {
    this.cell = cell;
    this.cells = new Map();
  }

  keys(box) {
    const keys = [];
    for (let gx = Math.floor(box.x1 / this.cell); gx <= Math.floor(box.x2 / this.cell); gx++) {
      for (let gy = Math.floor(box.y1 / this.cell); gy <= Math.floor(box.y2 / this.cell); gy++) keys.push(`${gx},${gy}`);
    }
    return keys;
  }

  add(box) {
    for (const key of this.keys(box)) {
      if (!this.cells.has(key)) this.cells.set(key, []);
      this.cells.get(key).push(box);
    }
  }

  hits(box, ignore) {
    for (const key of this.keys(box)) {
      for (const other of this.cells.get(key) || []) {
        if (other.owner === ignore) continue;
        if (box.x1 < other.x2 && other.x1 < box.x2 && box.y1 < other.y2 && other.y1 < box.y2) return true;
      }
    }
    return false;
  }
}

function labelPriority(node) {
  // The node asked about first, then search matches, then entities by how many memories mention
  // them, then memories by strength.
  const d = node.data();
  if (node.hasClass("focus")) return 1e9;
  const match = node.hasClass("match") ? 1e6 : 0;
  if (d.kind === "entity") return match + 10 + node.degree(false);
  return match + d.strength * 10 + (d.pinned ? 5 : 0);
}

function viewportKey() {
  const pan = cy.pan();
  return `${cy.zoom().toFixed(4)} ${pan.x.toFixed(1)} ${pan.y.toFixed(1)} ${cy.width()}x${cy.height()}`;
}

function placeLabels() {
  if (!cy) return;
  const zoom = cy.zoom();
  const width = cy.width();
  const height = cy.height();
  const labels = new BoxGrid();
  const onScreen = [];
  cy.nodes().forEach((node) => {
    const p = node.renderedPosition();
    const r = node.renderedOuterWidth() / 2;
    if (p.x + r < 0 || p.x - r > width || p.y + r < 0 || p.y - r > height) return;
    onScreen.push({ node, p, r, priority: labelPriority(node) });
  });
  onScreen.sort((a, b) => b.priority - a.priority);
  const chosen = new Set();
  // Cytoscape draws a label's text below the node's body plus the margin, and counts
  // LABEL_BOUNDS_MODEL model units around the text as the label's own.
  const around = LABEL_BOUNDS_MODEL * zoom + LABEL_PAD;
  for (const { node, p } of onScreen) {
    const half = labelWidth(node.data("short")) / 2 + around;
    const textTop = p.y + node.renderedHeight() / 2 + LABEL_GAP;
    const box = { x1: p.x - half, x2: p.x + half, y1: textTop - around, y2: textTop + FONT_PX + around, owner: node.id() };
    if (box.x1 < 0 || box.x2 > width || box.y2 > height) continue;
    if (labels.hits(box)) continue;
    labels.add(box);
    chosen.add(node.id());
  }
  cy.batch(() => {
    cy.nodes(".labelled").forEach((node) => {
      if (!chosen.has(node.id())) node.removeClass("labelled");
    });
    for (const id of chosen) {
      const node = cy.getElementById(id);
      node.data({ fontSize: FONT_PX / zoom, labelGap: LABEL_GAP / zoom });
      node.addClass("labelled");
    }
  });
  // Which viewport the labels were placed for (the browser tests wait for the current one).
  cy.container().dataset.labelledFor = viewportKey();
}

let placeTimer = null;
function placeLabelsSoon() {
  clearTimeout(placeTimer);
  placeTimer = setTimeout(placeLabels, 60);
}

function fit() {
  if (!cy) return;
  cy.fit(undefined, FIT_PADDING);
  if (cy.zoom() > MAX_FIT_ZOOM) {
    cy.zoom(MAX_FIT_ZOOM);
    cy.center();
  }
  placeLabels();
}

// --- filters, neighbourhood, panel --------------------------------------------------------------

function urlState() {
  const params = new URLSearchParams(location.search);
  return { focus: params.get("focus") || "", depth: params.get("depth") || "1" };
}

function setUrl(changes) {
  const url = new URL(location.href);
  for (const [key, value] of Object.entries(changes)) {
    if (value) url.searchParams.set(key, value);
    else url.searchParams.delete(key);
  }
  history.replaceState(null, "", url.pathname + url.search);
}

async function loadEntities() {
  if (entitiesLoaded) return;
  const { entities } = await api("/dashboard/api/graph/entities/");
  const select = document.getElementById("graph-entity");
  const chosen = new URLSearchParams(location.search).get("entity") || "";
  for (const entity of entities) {
    select.append(el("option", { value: String(entity.id) }, `${entity.name} (${entity.kind}, ${entity.mentions})`));
  }
  select.value = chosen;
  entitiesLoaded = true;
}

function showPanel(node) {
  const panel = document.getElementById("graph-panel");
  const d = node.data();
  if (d.kind !== "memory") return;
  panel.replaceChildren(
    el("div", { className: "chips" }, el("span", { className: `chip cat-${d.category}` }, d.category), " ", el("span", { className: `chip status-${d.status}` }, d.status)),
    el("p", { className: "graph-panel-text" }, d.label),
    el(
      "p",
      { className: "row" },
      el("a", { href: memoryUrl(d.id), id: "graph-panel-open" }, "Open memory"),
      " · ",
      el("a", { href: "#", id: "graph-panel-focus", onclick: (e) => (e.preventDefault(), focusOn(d.id)) }, "Neighbourhood"),
    ),
  );
  panel.hidden = false;
}

function focusOn(id) {
  setUrl({ focus: id });
  document.getElementById("graph-panel").hidden = true;
  draw().catch((error) => status(error.message));
}

function describe(graph, nodes, edges) {
  const memories = graph.memory_count;
  const entities = nodes.length - nodes.filter((n) => n.kind === "memory").length;
  const contradictions = edges.filter((e) => e.type === "contradicts").length;
  const parts = [`${memories} memories${graph.truncated ? " (strongest shown)" : ""}`, `${entities} entities`, `${edges.length} edges`];
  if (contradictions) parts.push(`${contradictions} contradictions`);
  if (graph.hidden_unlinked) parts.push(`${graph.hidden_unlinked} unlinked hidden`);
  return parts.join(", ");
}

async function draw() {
  const ticket = ++drawing;
  const container = document.getElementById("graph");
  container.dataset.drawn = "0";
  const formNode = document.getElementById("graph-filters");
  const data = new FormData(formNode);
  const { focus, depth } = urlState();
  const showEntities = data.get("entities") === "on";
  const q = (data.get("q") || "").trim();
  const entity = data.get("entity") || "";
  status("Loading…");
  const params = focus
    ? { focus, depth, limit: data.get("limit") || "" }
    : {
        categories: data.getAll("category").join(","),
        limit: data.get("limit") || "",
        unlinked: data.get("unlinked") === "on" ? "true" : "",
        entity,
        q,
      };
  if (!focus) setUrl({ q, entity, focus: "", depth: "" });
  const graph = await api("/dashboard/api/graph/", { params });
  if (ticket !== drawing) return;
  const focusBox = document.getElementById("graph-focus");
  focusBox.hidden = !graph.focus;
  if (graph.focus) {
    document.getElementById("graph-focus-label").textContent = truncate(graph.focus.label, 80);
    document.getElementById("graph-depth").value = String(graph.focus.depth);
  }
  const nodes = graph.nodes.filter((n) => showEntities || n.kind === "memory");
  const ids = new Set(nodes.map((n) => n.id));
  const edges = graph.edges.filter((e) => ids.has(e.source) && ids.has(e.target));
  const big = nodes.length > FORCE_LAYOUT_MAX;
  const positions = big && !graph.focus ? categoryLayout(nodes, edges) : null;
  const needle = q.toLowerCase();
  const elements = [
    ...nodes.map((n) => {
      const classes = [];
      if (graph.focus && n.id === graph.focus.id) classes.push("focus");
      if (needle && n.label.toLowerCase().includes(needle)) classes.push("match");
      return {
        group: "nodes",
        data: { ...n, short: truncate(n.label, LABEL_CHARS), fontSize: FONT_PX, labelGap: LABEL_GAP },
        classes: classes.join(" "),
        position: positions ? positions[n.id] : undefined,
      };
    }),
    ...edges.map((e) => ({ group: "edges", data: e })),
  ];
  let layout;
  if (positions) layout = { name: "preset", fit: false };
  else if (graph.focus) {
    // Rings by hop distance around the memory asked about; entities on the first ring.
    layout = {
      name: "concentric",
      fit: false,
      minNodeSpacing: 40,
      concentric: (node) => (node.data("kind") === "entity" ? 9 : 10 - (node.data("hop") || 0)),
      levelWidth: () => 1,
    };
  } else layout = { name: "cose", animate: false, fit: false, numIter: 800, randomizeSeed: 1, nodeRepulsion: () => 12000, idealEdgeLength: () => 60 };
  if (cy) cy.destroy();
  container.dataset.nodes = String(nodes.length);
  cy = cytoscape({
    container,
    elements,
    style: style(),
    layout,
    minZoom: 0.02,
    maxZoom: 4,
    textureOnViewport: big,
    hideEdgesOnViewport: nodes.length > 1500,
    motionBlur: false,
  });
  // The browser tests read positions and label boxes from the drawn graph.
  container.graph = cy;
  const tip = document.getElementById("graph-tip");
  cy.on("tap", 'node[kind = "memory"]', (event) => showPanel(event.target));
  cy.on("tap", 'node[kind = "entity"]', (event) => {
    const select = document.getElementById("graph-entity");
    const entityId = event.target.id().slice(1);
    if (![...select.options].some((o) => o.value === entityId)) {
      select.append(el("option", { value: entityId }, event.target.data("label")));
    }
    select.value = entityId;
    setUrl({ focus: "" });
    draw().catch((error) => status(error.message));
  });
  cy.on("tap", (event) => {
    if (event.target === cy) document.getElementById("graph-panel").hidden = true;
  });
  cy.on("mouseover", "node", (event) => {
    const d = event.target.data();
    tip.replaceChildren(
      el("strong", {}, d.kind === "memory" ? d.category : d.entity_kind || "entity"),
      el("div", {}, truncate(d.label, 200)),
      d.kind === "memory" ? el("div", { className: "muted" }, `${d.status} · strength ${d.strength}`) : null,
    );
    tip.hidden = false;
    // Restyling every element on each hover is too slow for a big graph.
    if (!big) cy.elements().not(event.target.closedNeighborhood()).addClass("faded");
  });
  cy.on("mouseout", "node", () => {
    tip.hidden = true;
    if (!big) cy.elements().removeClass("faded");
  });
  cy.on("viewport", placeLabelsSoon);
  cy.on("resize", placeLabelsSoon);
  fit();
  status(describe(graph, nodes, edges));
  container.dataset.drawn = "1";
}

export async function init() {
  const formNode = document.getElementById("graph-filters");
  const params = new URLSearchParams(location.search);
  document.getElementById("graph-q").value = params.get("q") || "";
  const redraw = () => draw().catch((error) => status(error.message));
  formNode.addEventListener("submit", (e) => {
    e.preventDefault();
    setUrl({ focus: "" });
    redraw();
  });
  for (const box of formNode.querySelectorAll("input[type=checkbox], select")) {
    box.addEventListener("change", () => {
      setUrl({ focus: "" });
      redraw();
    });
  }
  document.getElementById("graph-fit").addEventListener("click", fit);
  document.getElementById("graph-depth").addEventListener("change", (e) => {
    setUrl({ depth: e.target.value });
    redraw();
  });
  document.getElementById("graph-focus-clear").addEventListener("click", () => {
    setUrl({ focus: "", depth: "" });
    redraw();
  });
  try {
    await loadEntities();
    await draw();
  } catch (error) {
    status(error.message);
  }
}
