"""Erasing an owner's data (all of it, or one agent's) with a receipt; `erasure_delete_planned` also
serves memories.services.actions.memory_delete_hard, which erases one memory the same way."""

import json
import logging
import time

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac

from erasure.hooks import ErasureContext, erasure_hooks_run
from erasure.models import ErasureReceipt
from erasure.plan import erasure_plan, model_label
from memory_project.events import event_publish

logger = logging.getLogger(__name__)

# A write of the owner committed while the erasure ran (a turn into a session being erased) fails
# the erasure's foreign-key check at commit; it is simply run again.
ATTEMPTS = 3
_DIGEST_SALT = "erasure.receipt"


def receipt_document(receipt: ErasureReceipt) -> str:
    """The canonical text the digest signs: what was erased, for whom, when — never what it said."""
    return json.dumps(
        {
            "id": str(receipt.id),
            "owner_id": receipt.owner_id,
            "agent": receipt.agent,
            "account_deleted": receipt.account_deleted,
            "erased_at": receipt.erased_at.isoformat(),
            "counts": dict(sorted(receipt.counts.items())),
            "total": receipt.total,
        },
        sort_keys=True,
        separators=(",", ":"),
    )


def receipt_digest(receipt: ErasureReceipt) -> str:
    # Keyed with the service's secret: a receipt whose figures were edited no longer verifies.
    return salted_hmac(_DIGEST_SALT, receipt_document(receipt), algorithm="sha256").hexdigest()


def receipt_verify(receipt: ErasureReceipt) -> bool:
    return constant_time_compare(receipt.digest, receipt_digest(receipt))


def erasure_delete_planned(context: ErasureContext) -> dict[str, int]:
    """Run the hooks, then delete every row of the plan (inside the caller's transaction); the counts."""
    plan = context.plan
    counts = {model_label(m): plan.queryset(m).count() for m in plan.models}
    erasure_hooks_run(context)
    for model, fk in plan.detach:
        target_rows = plan.queryset(fk.related_model).values(fk.target_field.attname)
        referencing = model._base_manager.filter(**{f"{fk.attname}__in": target_rows})
        if model in plan.models:
            referencing = referencing.exclude(pk__in=plan.queryset(model).values("pk"))
        default = None if fk.remote_field.on_delete.__name__ == "SET_NULL" else fk.get_default()
        referencing.update(**{fk.attname: default})
    for model in plan.models:
        plan.queryset(model)._raw_delete("default")
    merged = {k: v for k, v in counts.items() if v}
    for kind, n in context.counts.items():
        merged[kind] = merged.get(kind, 0) + n
    return merged


def owner_erase(
    *, owner_id: int, requested_by: str, agent: str | None = None, delete_account: bool = False
) -> tuple[ErasureReceipt, bool]:
    """Erase every row, file and cached entry of the owner (or of one agent namespace of theirs) in
    one database transaction; returns (receipt, created).

    An erasure that finds nothing left to erase changes nothing and returns the latest receipt of
    the same scope (created False): erasing twice is a no-op.
    """
    user = get_user_model()._base_manager.get(pk=owner_id)
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return _erase_once(user=user, requested_by=requested_by, agent=agent, delete_account=delete_account)
        except IntegrityError:
            if attempt == ATTEMPTS:
                raise
            logger.warning("erasure of owner %s met a concurrent write; trying again", owner_id)
    raise AssertionError("unreachable")


def _erase_once(*, user, requested_by: str, agent: str | None, delete_account: bool) -> tuple[ErasureReceipt, bool]:
    started = time.perf_counter()
    with transaction.atomic():
        # Two erasures of one owner run one after the other.
        get_user_model()._base_manager.select_for_update().filter(pk=user.pk).exists()
        plan = erasure_plan(owner_id=user.pk, agent=agent, delete_account=delete_account)
        context = ErasureContext(owner_id=user.pk, username=user.get_username(), agent=agent, plan=plan)
        counts = erasure_delete_planned(context)
        if not counts:
            previous = ErasureReceipt.objects.filter(owner_id=user.pk, agent=agent).first()
            if previous is not None:
                return previous, False
        receipt = ErasureReceipt(
            owner_id=user.pk,
            agent=agent,
            account_deleted=delete_account,
            requested_by=requested_by[:200],
            counts=counts,
            total=sum(counts.values()),
            erased_at=timezone.now(),
        )
        receipt.digest = receipt_digest(receipt)
        receipt.duration_ms = int((time.perf_counter() - started) * 1000)
        receipt.save(force_insert=True)
        for action in context.after_commit_actions:
            transaction.on_commit(action, robust=True)
        event_publish(
            owner_id=user.pk,
            type="erasure.completed",
            data={"receipt_id": str(receipt.id), "agent": agent, "total": receipt.total},
            rules=False,
        )
    logger.info("erased %s rows/files/keys of owner %s (agent %r)", receipt.total, user.pk, agent)
    return receipt, True
