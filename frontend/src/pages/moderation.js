// Moderation queue: approve, edit (then approve) or reject each pending memory.
import { api, el, onLiveEvent, withOwner } from "../util.js";

async function moderate(item, action) {
  const result = item.querySelector('[data-role="result"]');
  const body = { action };
  if (action === "save") {
    const edit = item.querySelector(".mod-edit");
    body.action = "approve";
    body.changes = { content: edit.querySelector("textarea").value, category: edit.querySelector("select").value };
  }
  for (const button of item.querySelectorAll("button")) button.disabled = true;
  try {
    await api(`/dashboard/api/memories/${item.dataset.id}/action/`, { method: "POST", body });
    item.classList.add("done");
    result.textContent = body.action === "approve" ? "approved" : "rejected";
    setTimeout(() => {
      item.remove();
      if (!document.querySelector(".mod-item")) {
        document.getElementById("mod-queue").append(el("p", { className: "card muted", id: "mod-empty" }, "Nothing waits for review."));
      }
    }, 600);
  } catch (error) {
    result.textContent = error.message;
    for (const button of item.querySelectorAll("button")) button.disabled = false;
  }
}

export function init() {
  for (const item of document.querySelectorAll(".mod-item")) {
    item.addEventListener("click", (e) => {
      const button = e.target.closest("button[data-mod]");
      if (!button) return;
      const action = button.dataset.mod;
      if (action === "edit") {
        item.querySelector(".mod-edit").hidden = false;
        item.querySelector('[data-role="content"]').hidden = true;
        item.querySelector('[data-mod="save"]').hidden = false;
        button.hidden = true;
        return;
      }
      moderate(item, action);
    });
  }
  onLiveEvent((event) => {
    const memory = event.type === "memory.changed" && event.data && event.data.memory;
    if (!memory || memory.status !== "pending_review" || document.getElementById("mod-new")) return;
    if (document.querySelector(`.mod-item[data-id="${CSS.escape(memory.id)}"]`)) return;
    const notice = el(
      "p",
      { className: "notice", id: "mod-new" },
      "New memories wait for review. ",
      el("a", { href: withOwner(location.pathname) }, "Reload the queue"),
    );
    document.getElementById("mod-queue").prepend(notice);
  });
}
