"""The Telegram webhook (called by Telegram, authenticated by its secret token) and the link-code
endpoint for a logged-in dashboard user."""

import hmac
import json
import logging

from django.conf import settings
from django.http import Http404, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from integrations.services.telegram import (
    telegram_link_code_create,
    telegram_link_code_payload,
    telegram_update_receive,
)
from memory_project.api.fields import json_problem

logger = logging.getLogger(__name__)

SECRET_HEADER = "HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN"


def _error(status: int, code: str, message: str) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message, "details": None}}, status=status)


@csrf_exempt
def telegram_webhook(request):
    expected = settings.TELEGRAM_WEBHOOK_SECRET
    if not expected:
        # No secret configured: the bot is off, and the endpoint does not exist.
        raise Http404
    if request.method != "POST":
        return _error(405, "method_not_allowed", "Use POST.")
    given = request.META.get(SECRET_HEADER, "")
    if not hmac.compare_digest(given.encode(), expected.encode()):
        return _error(403, "forbidden", "Wrong or missing X-Telegram-Bot-Api-Secret-Token.")
    try:
        update = json.loads(request.body)
    except (ValueError, RecursionError):
        return _error(400, "parse_error", "The body must be a JSON object.")
    update_id = update.get("update_id") if isinstance(update, dict) else None
    if not isinstance(update_id, int) or isinstance(update_id, bool) or not 0 <= update_id < 2**63:
        return _error(400, "invalid", "update_id must be a non-negative integer.")
    problem = json_problem(update)
    if problem:
        return _error(400, "invalid", problem)
    telegram_update_receive(update=update)
    # Telegram only needs a 2xx; a redelivered update is acknowledged the same way.
    return JsonResponse({"ok": True})


def telegram_link_code(request):
    """POST: a new one-time code for the logged-in user to send to the bot as /start <code>."""
    if not request.user.is_authenticated:
        return _error(401, "not_authenticated", "Log in to get a link code.")
    if request.method != "POST":
        return _error(405, "method_not_allowed", "Use POST.")
    code = telegram_link_code_create(owner=request.user)
    return JsonResponse(telegram_link_code_payload(code), status=201)
