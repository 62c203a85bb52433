"""What an erasure removes from the integrations besides the rows its plan finds by foreign key:
Telegram updates not processed yet (they name the sender, not the owner) and webhook deliveries whose
payload names an erased memory or session. Registered from IntegrationsConfig.ready()."""

import json
import re

from erasure.hooks import ErasureContext, erasure_hook_register
from integrations.models import TelegramUpdate, WebhookDelivery

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _telegram_updates(*, context: ErasureContext) -> None:
    """Updates not processed yet still carry the message; they name the sender, not the owner."""
    if context.plan.partial:
        return
    telegram_ids = list(context.erased("integrations.TelegramLink").values_list("telegram_user_id", flat=True))
    deleted = 0
    for telegram_id in telegram_ids:
        sent_by = TelegramUpdate.objects.filter(payload__message__from__id=telegram_id) | TelegramUpdate.objects.filter(
            payload__edited_message__from__id=telegram_id
        )
        deleted += sent_by._raw_delete("default")
    context.count("integrations.TelegramUpdate", deleted)


def _webhook_deliveries(*, context: ErasureContext) -> None:
    """Erasing one agent (or some memories) keeps the owner's subscriptions, but not the deliveries
    whose payload names an erased memory or session."""
    if not context.plan.partial:
        return
    erased_ids = {str(i) for i in context.erased("memories.Memory").values_list("pk", flat=True)}
    erased_ids |= {str(i) for i in context.erased("chat_sessions.ChatSession").values_list("pk", flat=True)}
    doomed = []
    deliveries = WebhookDelivery.objects.filter(subscription__owner_id=context.owner_id)
    for pk, payload in deliveries.values_list("pk", "payload").iterator(1000):
        if erased_ids.intersection(_UUID.findall(json.dumps(payload))):
            doomed.append(pk)
    context.count("integrations.WebhookDelivery", WebhookDelivery.objects.filter(pk__in=doomed)._raw_delete("default"))


def integration_erasure_hooks_register() -> None:
    for hook in (_telegram_updates, _webhook_deliveries):
        erasure_hook_register(hook)
