"""A small Telegram Bot API client over httpx2: JSON in, `result` out, retries on errors worth retrying."""

import logging
import time

import httpx2
from django.conf import settings

from integrations.services.http import http_client

logger = logging.getLogger(__name__)

# Bot API limit for one sendMessage text.
MAX_MESSAGE_CHARS = 4096


class TelegramApiError(Exception):
    """The Bot API refused the call, or could not be reached after every retry."""

    def __init__(self, message: str, *, status_code: int | None = None):
        super().__init__(message)
        self.status_code = status_code


def _redact(text: str) -> str:
    token = settings.TELEGRAM_BOT_TOKEN
    return text.replace(token, "<token>") if token else text


def telegram_call(method: str, payload: dict):
    """POST `payload` to the Bot API `method` and return its `result`.

    Network errors, 429 and 5xx are retried with exponential backoff (a 429's `retry_after` is
    honoured); any other refusal is final, since sending the same request again cannot help.
    """
    if not settings.TELEGRAM_BOT_TOKEN:
        raise TelegramApiError("TELEGRAM_BOT_TOKEN is not set")
    url = f"{settings.TELEGRAM_API_BASE.rstrip('/')}/bot{settings.TELEGRAM_BOT_TOKEN}/{method}"
    attempts = max(1, settings.TELEGRAM_SEND_MAX_ATTEMPTS)
    for attempt in range(1, attempts + 1):
        retry_after = None
        status_code = None
        try:
            response = http_client().post(url, json=payload, timeout=settings.TELEGRAM_TIMEOUT_SECONDS)
        except httpx2.HTTPError as exc:
            error, retryable = f"{exc.__class__.__name__}: {exc}", True
        else:
            status_code = response.status_code
            try:
                body = response.json()
            except ValueError:
                body = {}
            if not isinstance(body, dict):
                body = {}
            if status_code == 200 and body.get("ok"):
                return body.get("result")
            error = f"HTTP {status_code}: {body.get('description') or response.text[:200]}"
            retryable = status_code == 429 or status_code >= 500
            parameters = body.get("parameters") if isinstance(body.get("parameters"), dict) else {}
            if isinstance(parameters.get("retry_after"), int | float):
                retry_after = float(parameters["retry_after"])
        error = _redact(error)
        if not retryable or attempt == attempts:
            raise TelegramApiError(f"{method} failed after {attempt} attempt(s): {error}", status_code=status_code)
        delay = retry_after if retry_after is not None else settings.TELEGRAM_RETRY_BASE_SECONDS * 2 ** (attempt - 1)
        delay = min(delay, settings.TELEGRAM_RETRY_MAX_SECONDS)
        logger.info("Telegram %s attempt %s failed (%s); retrying in %.1fs", method, attempt, error, delay)
        if delay > 0:
            time.sleep(delay)
    raise AssertionError("unreachable")


def telegram_file_download(file_id: str, *, max_bytes: int) -> bytes:
    """The bytes of a file a user sent (getFile, then the file URL); a file larger than `max_bytes`
    is refused before it is downloaded (TelegramFileTooLarge)."""
    info = telegram_call("getFile", {"file_id": file_id}) or {}
    size = info.get("file_size")
    if isinstance(size, int) and size > max_bytes:
        raise TelegramFileTooLarge(size)
    path = info.get("file_path")
    if not isinstance(path, str) or not path:
        raise TelegramApiError("getFile returned no file_path")
    url = f"{settings.TELEGRAM_API_BASE.rstrip('/')}/file/bot{settings.TELEGRAM_BOT_TOKEN}/{path}"
    try:
        response = http_client().get(url, timeout=settings.TELEGRAM_TIMEOUT_SECONDS)
    except httpx2.HTTPError as exc:
        raise TelegramApiError(_redact(f"file download failed: {exc.__class__.__name__}: {exc}")) from exc
    if response.status_code != 200:
        raise TelegramApiError(f"file download failed: HTTP {response.status_code}", status_code=response.status_code)
    if len(response.content) > max_bytes:
        raise TelegramFileTooLarge(len(response.content))
    return response.content


class TelegramFileTooLarge(Exception):
    def __init__(self, size: int):
        super().__init__(f"file of {size} bytes")
        self.size = size


def message_chunks(text: str, size: int = MAX_MESSAGE_CHARS) -> list[str]:
    """Split `text` into messages the Bot API accepts, at line breaks where it can."""
    text = text or "…"
    chunks = []
    while len(text) > size:
        cut = text.rfind("\n", 0, size)
        cut = cut if cut > size // 2 else size
        chunks.append(text[:cut])
        text = text[cut:].lstrip("\n")
    chunks.append(text)
    return chunks


def telegram_send_message(*, chat_id: int, text: str) -> bool:
    """Send `text` as plain text (no parse_mode, so nothing in it is interpreted); False on failure."""
    try:
        for chunk in message_chunks(text):
            telegram_call("sendMessage", {"chat_id": chat_id, "text": chunk})
    except TelegramApiError as exc:
        logger.warning("could not send a Telegram message to chat %s: %s", chat_id, exc)
        return False
    return True


def telegram_set_webhook(*, url: str, secret_token: str, drop_pending_updates: bool = False):
    return telegram_call(
        "setWebhook",
        {
            "url": url,
            "secret_token": secret_token,
            "allowed_updates": ["message"],
            "drop_pending_updates": drop_pending_updates,
        },
    )
