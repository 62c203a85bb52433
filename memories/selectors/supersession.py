"""History below what replaced it: a superseded memory never ranks above the memory that superseded it,
nor above what was said with that memory in the same conversation."""

from memories.models import MemoryRelation, RelationType


def current_first(*, results: list[dict], owner_id) -> list[dict]:
    """Move each superseded memory of `results` just below the lowest-ranked of its replacements found
    with it. A question about a changed fact is answered by the current value first, however much
    closer the old wording is to the question ("在哪家公司工作" is nearer "在阿里巴巴工作" than "跳槽到了腾讯")."""
    ids = [r["id"] for r in results if r["type"] == "memory"]
    # A superseded memory is archived when it is replaced: without an archived hit there is nothing
    # to reorder, and no query to spend (the prompt's implicit recall never asks for archived ones).
    archived = [r["id"] for r in results if r["type"] == "memory" and r["status"] == "archived"]
    if len(ids) < 2 or not archived:
        return results
    pairs = MemoryRelation.objects.filter(
        owner_id=owner_id, type=RelationType.SUPERSEDES, source_id__in=ids, target_id__in=archived
    ).values_list("source_id", "target_id")
    replaced_by: dict[str, set[str]] = {}
    for new, old in pairs:
        replaced_by.setdefault(str(old), set()).add(str(new))
    if not replaced_by:
        return results
    # "User left Google" supersedes "User works at Google"; "User is at Stripe now", said in the same
    # conversation, is the new state itself, though nothing links it to the old one.
    session_of = {r["id"]: r.get("session_id") for r in results if r["type"] == "memory"}
    said_with: dict[str, set[str]] = {}
    for r in results:
        if r["type"] == "memory" and r["status"] == "active" and r.get("session_id"):
            said_with.setdefault(r["session_id"], set()).add(r["id"])
    for old_id, new_ids in replaced_by.items():
        sessions = {session_of[n] for n in new_ids if session_of.get(n)}
        new_ids |= {other for session in sessions for other in said_with.get(session, ())} - {old_id}
    ordered = list(results)
    # A chain (tea → coffee → tea) settles in at most as many passes as it has links.
    for _ in range(len(replaced_by) + 1):
        moved = False
        for old_id, new_ids in replaced_by.items():
            position = {r["id"]: i for i, r in enumerate(ordered)}
            last_new = max(position[n] for n in new_ids)
            if position[old_id] < last_new:
                stale = ordered.pop(position[old_id])
                anchor = ordered[last_new - 1]
                stale["score"] = min(stale["score"], anchor["score"])
                ordered.insert(last_new, stale)
                moved = True
        if not moved:
            break
    return ordered
