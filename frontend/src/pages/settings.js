// Settings: create and revoke API keys, add and delete webhooks. A new key or signing secret is
// shown once, in the page, with a copy button; nothing secret is kept in the page's URL or storage.
import { api, el, notify } from "../util.js";

function fmt(iso) {
  return iso ? iso.slice(0, 16).replace("T", " ") : "never";
}

function keyRow(key) {
  return el(
    "tr",
    { dataset: { keyId: String(key.id), revoked: "0" }, className: "flash" },
    el("td", {}, key.name || "—"),
    el("td", {}, el("code", {}, `${key.prefix}…`)),
    el("td", { className: "nowrap small" }, fmt(key.created_at)),
    el("td", { className: "nowrap small" }, fmt(key.last_used_at)),
    el("td", { dataset: { role: "status" } }, el("span", { className: "chip status-active" }, "active")),
    el("td", {}, el("button", { type: "button", className: "small danger", dataset: { revoke: String(key.id) } }, "Revoke")),
  );
}

async function createKey(form) {
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  try {
    const result = await api("/dashboard/api/keys/", { method: "POST", body: { name: form.elements.name.value.trim() } });
    document.getElementById("new-key-value").textContent = result.raw;
    document.getElementById("new-key").hidden = false;
    const body = document.querySelector("#keys tbody");
    body.querySelector("[data-empty]")?.remove();
    body.prepend(keyRow(result.key));
    form.reset();
    notify(`Key "${result.key.name || result.key.prefix}" created.`, "success");
  } catch (error) {
    notify(error.message, "error");
  } finally {
    button.disabled = false;
  }
}

async function revokeKey(button) {
  const row = button.closest("tr");
  const name = row.firstElementChild.textContent;
  if (!window.confirm(`Revoke the key "${name}"? Agents using it are refused from now on.`)) return;
  button.disabled = true;
  try {
    const result = await api(`/dashboard/api/keys/${button.dataset.revoke}/revoke/`, { method: "POST", body: {} });
    row.dataset.revoked = "1";
    row.querySelector("[data-role=status]").replaceChildren(
      el("span", { className: "chip status-rejected" }, `revoked ${result.key.revoked_at.slice(0, 10)}`),
    );
    button.remove();
    notify(`Key "${name}" revoked.`, "success");
  } catch (error) {
    button.disabled = false;
    notify(error.message, "error");
  }
}

async function createWebhook(form) {
  const data = new FormData(form);
  const body = { url: data.get("url").trim(), events: data.getAll("events"), description: data.get("description").trim() };
  try {
    const created = await api("/dashboard/api/webhooks/", { method: "POST", body });
    document.getElementById("new-webhook-secret").textContent = created.secret;
    document.getElementById("new-webhook").hidden = false;
    notify(`Webhook to ${created.url} added.`, "success");
    // The list is the server's: reload it, keeping the secret on screen until then.
    const tbody = document.querySelector("#webhooks tbody");
    tbody.querySelector("[data-empty]")?.remove();
    tbody.prepend(
      el(
        "tr",
        { dataset: { webhookId: created.id }, className: "flash" },
        el("td", { className: "url-cell" }, el("a", { href: `${location.pathname}${created.id}/${location.search}` }, created.url)),
        el("td", {}, created.events.map((e) => [el("span", { className: "chip small" }, e), " "])),
        el("td", { className: "nowrap small" }, fmt(created.created_at)),
        el("td", {}, el("span", { className: "chip status-active" }, "active")),
        el("td", {}, el("button", { type: "button", className: "small danger", dataset: { deleteWebhook: created.id } }, "Delete")),
      ),
    );
    form.reset();
  } catch (error) {
    notify(error.message, "error");
  }
}

async function deleteWebhook(button) {
  const row = button.closest("tr");
  if (!window.confirm("Delete this webhook and its delivery log?")) return;
  try {
    await api(`/dashboard/api/webhooks/${button.dataset.deleteWebhook}/`, { method: "DELETE" });
    row.remove();
    notify("Webhook deleted.", "success");
  } catch (error) {
    notify(error.message, "error");
  }
}

export function init() {
  document.getElementById("key-form")?.addEventListener("submit", (e) => {
    e.preventDefault();
    createKey(e.target);
  });
  document.getElementById("webhook-form")?.addEventListener("submit", (e) => {
    e.preventDefault();
    createWebhook(e.target);
  });
  document.addEventListener("click", (e) => {
    const revoke = e.target.closest("[data-revoke]");
    if (revoke) revokeKey(revoke);
    const remove = e.target.closest("[data-delete-webhook]");
    if (remove) deleteWebhook(remove);
    const copy = e.target.closest("[data-copy]");
    if (copy) {
      navigator.clipboard?.writeText(document.querySelector(copy.dataset.copy).textContent).then(
        () => notify("Copied.", "info", 2000),
        () => notify("Select the text and copy it by hand.", "info"),
      );
    }
  });
}
