// The import page: the file goes to POST /api/v1/import/ as a background job, then the job's
// progress is polled (GET /api/v1/import/jobs/<id>/) into the progress bar until it is done or
// refused (its bad lines listed). Text from the file is only ever set as textContent.
import { el, withOwner } from "../util.js";

function csrf() {
  const match = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

function show(job) {
  const box = document.getElementById("import-job");
  box.hidden = false;
  box.querySelector("[data-role='name']").textContent = job.name || job.format || "the file";
  document.getElementById("import-progress").value = job.percent;
  box.querySelector("[data-role='status']").textContent = job.status;
  box.querySelector("[data-role='count']").textContent = job.total
    ? `${job.processed} of ${job.total} entries (${job.percent}%)`
    : job.status === "pending" ? "waiting to start" : "reading the file";
  // What the finished import did (merge or restore): added, and left unchanged as imported before.
  const outcome = box.querySelector("[data-role='outcome']");
  const report = job.status === "done" ? job.report : null;
  outcome.hidden = !report;
  outcome.textContent = report
    ? `${report.mode}: ${report.added} added, ${report.merged} merged, ${report.reinforced} reinforced, ` +
      `${report.superseded} superseding, ${report.unchanged} unchanged`
    : "";
  const problems = document.getElementById("import-problems");
  problems.replaceChildren(
    ...(job.problems || []).map((p) => el("li", { text: `line ${p.line ?? "?"}: ${p.field ? `${p.field}: ` : ""}${p.message}` })),
    ...(job.status === "failed" && !(job.problems || []).length ? [el("li", { text: job.error })] : []),
  );
}

async function poll(url) {
  const response = await fetch(withOwner(url), { headers: { Accept: "application/json" }, credentials: "same-origin" });
  const job = await response.json();
  show(job);
  if (job.status === "pending" || job.status === "running") setTimeout(() => poll(url), 700);
}

export async function init() {
  const form = document.getElementById("import-form");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    for (const key of ["format", "mode", "agent"]) if (!data.get(key)) data.delete(key);
    data.set("background", "true");
    const response = await fetch(withOwner("/api/v1/import/"), {
      method: "POST",
      body: data,
      headers: { Accept: "application/json", "X-CSRFToken": csrf() },
      credentials: "same-origin",
    });
    const body = await response.json();
    if (!response.ok) {
      show({ status: "failed", percent: 0, processed: 0, total: 0, problems: [], error: body.error.message, name: "" });
      return;
    }
    show(body);
    poll(body.url);
  });
}
