"""The Telegram bot: linking, and turning a linked user's messages into turns of a "telegram" session.

An update is stored by the webhook view and processed in one transaction (a Celery task; in-process
without a broker): the turns it adds, the link it makes or the memory it forgets commit together
with the update being marked done, and the bot's replies are sent only after that commit.
"""

import logging
import secrets
from datetime import UTC, datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from attachments.services import attachments_prepare
from integrations.models import TelegramLink, TelegramLinkCode, TelegramUpdate
from integrations.services.telegram_api import TelegramFileTooLarge, telegram_file_download, telegram_send_message
from memories.models import Memory, Status
from memories.selectors.context import context_build
from memories.selectors.retrieval import memory_search
from memories.services.actions import memory_forget
from memories.services.responder import chat_answer
from memory_project.exceptions import ServiceError
from sessions.choices import Channel, Role
from sessions.models import ChatSession
from sessions.services.sessions import session_create, session_end, turn_append_many

logger = logging.getLogger(__name__)

# Unambiguous when read off a screen and typed on a phone (no 0/O, 1/I/L).
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8
FORGET_CONFIRM_MINUTES = 10
CANCEL_WORDS = {"/no", "/cancel", "no", "n", "cancel", "nope"}

NOT_LINKED = (
    "This chat is not linked to a memory account yet. Get a link code from the dashboard, then send /start <code> here."
)
INVALID_CODE = "That link code is invalid, used or expired. Get a new one from the dashboard and send /start <code>."
ONLY_TEXT = "I can only read text messages."
HELP = (
    "Talk to me and I'll remember what matters.\n"
    "/new – end this conversation (what mattered in it becomes memories) and start a new one\n"
    "/memories – what I currently keep in mind about you\n"
    "/forget <text> – forget the memory that best matches <text>\n"
    "/unlink – unlink this Telegram account\n"
    "/help – this message"
)


def telegram_link_code_create(*, owner) -> TelegramLinkCode:
    expires_at = timezone.now() + timedelta(minutes=settings.TELEGRAM_LINK_CODE_TTL_MINUTES)
    for _ in range(5):
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        try:
            with transaction.atomic():
                return TelegramLinkCode.objects.create(owner=owner, code=code, expires_at=expires_at)
        except IntegrityError:  # a collision in 31^8 codes: draw again
            continue
    raise RuntimeError("could not draw an unused link code")


def telegram_link_code_payload(code: TelegramLinkCode) -> dict:
    bot = settings.TELEGRAM_BOT_USERNAME.lstrip("@")
    return {
        "code": code.code,
        "expires_at": code.expires_at.isoformat(),
        "command": f"/start {code.code}",
        "link": f"https://t.me/{bot}?start={code.code}" if bot else None,
    }


# --- receiving ---------------------------------------------------------------------------------


def telegram_update_receive(*, update: dict) -> TelegramUpdate | None:
    """Store a new update and have it processed after commit; None for an update_id seen before."""
    update_id = update["update_id"]
    with transaction.atomic():
        row, created = TelegramUpdate.objects.get_or_create(update_id=update_id, defaults={"payload": update})
        if not created:
            return None
        transaction.on_commit(partial(telegram_update_dispatch, update_id=update_id))
    return row


def telegram_update_dispatch(*, update_id: int) -> None:
    # integrations.tasks imports this module (its task runs telegram_update_process): imported here,
    # when an update is dispatched, to break that circle.
    from integrations.tasks import telegram_update_task

    telegram_update_task.delay(update_id)


def telegram_update_process(*, update_id: int) -> str:
    """Process a stored update once; returns what was done (`linked`, `chat`, `unlinked`, …)."""
    replies: list[tuple[int, str]] = []
    with transaction.atomic():
        row = TelegramUpdate.objects.select_for_update().filter(update_id=update_id).first()
        if row is None or row.status == TelegramUpdate.UpdateStatus.DONE:
            return "skipped"
        outcome = _handle(row.payload, replies)
        TelegramUpdate.objects.filter(pk=row.pk).update(
            status=TelegramUpdate.UpdateStatus.DONE,
            outcome=outcome,
            payload={},
            attempts=F("attempts") + 1,
            last_error="",
            processed_at=timezone.now(),
        )
        for chat_id, text in replies:
            transaction.on_commit(partial(telegram_send_message, chat_id=chat_id, text=text), robust=True)
    return outcome


def telegram_update_failed(*, update_id: int, error: str) -> None:
    TelegramUpdate.objects.filter(update_id=update_id).exclude(status=TelegramUpdate.UpdateStatus.DONE).update(
        status=TelegramUpdate.UpdateStatus.FAILED, attempts=F("attempts") + 1, last_error=error[:2000]
    )


# --- handling ----------------------------------------------------------------------------------


def _command(text: str) -> tuple[str | None, str]:
    """("/forget", "coffee") for "/forget@MemoryBot coffee"; (None, text) for plain text."""
    if not text.startswith("/"):
        return None, text
    head, _, rest = text.partition(" ")
    return head.split("@", 1)[0].lower(), rest.strip()


def _telegram_id(value) -> int | None:
    """A user or chat id as the Bot API sends it (at most 52 bits, negative for groups); None for
    anything else, which would not fit the 64-bit columns it is looked up in."""
    if isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63:
        return value
    return None


def _handle(update: dict, replies: list) -> str:
    message = update.get("message")
    if not isinstance(message, dict):
        return "ignored"
    sender = message.get("from") if isinstance(message.get("from"), dict) else {}
    chat = message.get("chat") if isinstance(message.get("chat"), dict) else {}
    user_id, chat_id = _telegram_id(sender.get("id")), _telegram_id(chat.get("id"))
    if user_id is None or chat_id is None or sender.get("is_bot"):
        return "ignored"
    raw = message.get("text") if isinstance(message.get("text"), str) else ""
    shared = _shared_file(message)
    if shared is not None and isinstance(message.get("caption"), str):
        raw = message["caption"]
    # PostgreSQL text cannot hold NUL.
    text = raw.replace("\x00", "").strip()
    # A caption is what the user says about the file, never a command.
    command, argument = _command(text) if shared is None else (None, "")

    def reply(body: str) -> None:
        replies.append((chat_id, body))

    if command == "/start" and argument:
        return _link(code=argument, sender=sender, chat_id=chat_id, reply=reply)
    # Locked so one user's updates are handled one at a time (one open session, one pending forget).
    link = (
        TelegramLink.objects.select_for_update(of=("self",))
        .select_related("owner")
        .filter(telegram_user_id=user_id)
        .first()
    )
    if link is None or not link.owner.is_active:
        reply(NOT_LINKED)
        return "unlinked"
    if link.chat_id != chat_id:
        link.chat_id = chat_id
        link.save(update_fields=["chat_id"])
    if not text and shared is None:
        reply(ONLY_TEXT)
        return "unsupported"
    if link.pending_forget_id and command != "/yes":
        _pending_clear(link)
        if text.lower() in CANCEL_WORDS:
            reply("Cancelled: nothing was forgotten.")
            return "forget_cancelled"
        notice = "Cancelled: nothing was forgotten.\n\n"
    else:
        notice = ""
    handlers = {
        "/start": lambda: _already_linked(link),
        "/help": lambda: ("help", HELP),
        "/new": lambda: _new_session(link),
        "/memories": lambda: _memories(link),
        "/forget": lambda: _forget_ask(link, argument),
        "/yes": lambda: _forget_confirm(link),
        "/unlink": lambda: _unlink(link),
    }
    if command is None and shared is not None:
        attachment, refusal = _download(link, shared, caption=text)
        if refusal:
            reply(notice + refusal)
            return "file_refused"
        outcome, body = _chat(
            link, text=text or f"({shared['kind']}: {attachment['filename']})", message=message, attachment=attachment
        )
    elif command is None:
        outcome, body = _chat(link, text=text, message=message)
    else:
        outcome, body = handlers.get(command, lambda: ("help", f"Unknown command {command}.\n\n{HELP}"))()
    reply(notice + body)
    return outcome


def _link(*, code: str, sender: dict, chat_id: int, reply) -> str:
    now = timezone.now()
    found = (
        TelegramLinkCode.objects.select_for_update(of=("self",))
        .select_related("owner")
        .filter(code=code.strip().upper(), used_at__isnull=True, expires_at__gt=now)
        .first()
    )
    if found is None or not found.owner.is_active:
        reply(INVALID_CODE)
        return "link_refused"
    TelegramLink.objects.update_or_create(
        telegram_user_id=sender["id"],
        defaults={
            "owner": found.owner,
            "chat_id": chat_id,
            "first_name": str(sender.get("first_name") or "")[:100],
            "telegram_username": str(sender.get("username") or "")[:100],
            "pending_forget": None,
            "pending_forget_at": None,
        },
    )
    found.used_at = now
    found.used_by_telegram_user_id = sender["id"]
    found.save(update_fields=["used_at", "used_by_telegram_user_id"])
    reply(f"Linked to {found.owner.get_username()}.\n\n{HELP}")
    return "linked"


def _already_linked(link: TelegramLink) -> tuple[str, str]:
    return "help", f"This chat is linked to {link.owner.get_username()}.\n\n{HELP}"


def _open_session(link: TelegramLink) -> ChatSession:
    session = (
        ChatSession.objects.filter(
            owner=link.owner,
            channel=Channel.TELEGRAM,
            external_id=str(link.chat_id),
            status=ChatSession.SessionStatus.OPEN,
        )
        .order_by("-last_activity_at")
        .first()
    )
    if session is not None:
        return session
    return session_create(owner=link.owner, channel=Channel.TELEGRAM, external_id=str(link.chat_id), title="Telegram")


def _message_time(message: dict) -> datetime:
    now = timezone.now()
    date = message.get("date")
    if isinstance(date, int) and date > 0:
        # A skewed clock must not put the user's turn after the reply to it.
        return min(datetime.fromtimestamp(date, tz=UTC), now)
    return now


def _shared_file(message: dict) -> dict | None:
    """The photo (its largest size; Telegram sends photos as JPEG) or document of a message."""
    photos = message.get("photo")
    if isinstance(photos, list) and photos and isinstance(photos[-1], dict) and photos[-1].get("file_id"):
        name = f"photo_{message.get('message_id', 0)}.jpg"
        return {"kind": "photo", "file_id": str(photos[-1]["file_id"]), "filename": name, "content_type": "image/jpeg"}
    document = message.get("document")
    if isinstance(document, dict) and document.get("file_id"):
        return {
            "kind": "file",
            "file_id": str(document["file_id"]),
            "filename": str(document.get("file_name") or "document")[:255],
            "content_type": str(document.get("mime_type") or "application/octet-stream")[:100],
        }
    return None


def _download(link: TelegramLink, shared: dict, *, caption: str) -> tuple[dict | None, str]:
    """The attachment of a shared file, checked against the same limits as the API's; or a reply
    saying why it is not kept."""
    limit = settings.ATTACHMENT_MAX_BYTES
    try:
        data = telegram_file_download(shared["file_id"], max_bytes=limit)
    except TelegramFileTooLarge as exc:
        return None, f"I can't keep that file: it is {exc.size} bytes; the limit is {limit} bytes."
    attachment = {
        "filename": shared["filename"],
        "content_type": shared["content_type"],
        "data": data,
        "caption": caption,
    }
    try:
        attachments_prepare(owner_id=link.owner_id, turns=[{"attachments": [attachment]}])
    except ServiceError as exc:
        return None, f"I can't keep that file: {exc.message}"
    return attachment, ""


def _chat(link: TelegramLink, *, text: str, message: dict, attachment: dict | None = None) -> tuple[str, str]:
    session = _open_session(link)
    sender = message.get("from") or {}
    speaker = str(sender.get("first_name") or link.first_name or "user")[:100]
    metadata = {
        "telegram": {"message_id": message.get("message_id"), "chat_id": link.chat_id, "user_id": link.telegram_user_id}
    }
    turn_append_many(
        session=session,
        turns=[
            {
                "role": Role.USER,
                "content": text[: settings.MAX_CONTENT_CHARS],
                "speaker": speaker,
                "created_at": _message_time(message),
                "metadata": metadata,
                **({"attachments": [attachment]} if attachment else {}),
            }
        ],
    )
    answer = chat_answer(owner=link.owner, session=session, message=text, actor=f"telegram:{link.telegram_user_id}")
    return "chat", answer.reply.text


def _new_session(link: TelegramLink) -> tuple[str, str]:
    open_sessions = ChatSession.objects.filter(
        owner=link.owner,
        channel=Channel.TELEGRAM,
        external_id=str(link.chat_id),
        status=ChatSession.SessionStatus.OPEN,
    )
    ended = 0
    for session in open_sessions:
        session_end(session=session)
        ended += 1
    session_create(owner=link.owner, channel=Channel.TELEGRAM, external_id=str(link.chat_id), title="Telegram")
    if ended:
        return "new_session", "Started a new conversation. What mattered in the last one is being turned into memories."
    return "new_session", "Started a new conversation."


def _memories(link: TelegramLink) -> tuple[str, str]:
    pinned = [m for m in context_build(owner=link.owner)["memories"] if m["kind"] == "pinned"]
    if not pinned:
        return "memories", "I don't keep anything in mind about you yet. Talk to me, then send /new."
    lines = [f"{i}. [{m['category']}] {m['content']}" for i, m in enumerate(pinned, start=1)]
    return "memories", "What I keep in mind about you:\n" + "\n".join(lines)


def _pending_clear(link: TelegramLink) -> None:
    link.pending_forget = None
    link.pending_forget_at = None
    link.save(update_fields=["pending_forget", "pending_forget_at"])


def _forget_ask(link: TelegramLink, query: str) -> tuple[str, str]:
    if not query:
        return "forget_usage", "Tell me what to forget: /forget <text>"
    found = memory_search(owner=link.owner, query=query, top_k=1, scope="memories")["results"]
    best = found[0] if found else None
    if best is None or best["scores"]["relevance"] < settings.MEMORY_DECISION["FORGET_MIN_RELEVANCE"]:
        return "forget_not_found", f"I found no memory matching «{query}»."
    link.pending_forget_id = best["id"]
    link.pending_forget_at = timezone.now()
    link.save(update_fields=["pending_forget", "pending_forget_at"])
    return "forget_asked", f"Forget: «{best['content']}»? Reply /yes to confirm"


def _forget_confirm(link: TelegramLink) -> tuple[str, str]:
    memory_id, asked_at = link.pending_forget_id, link.pending_forget_at
    if memory_id is None:
        return "forget_nothing", "There is nothing to confirm. Use /forget <text> first."
    _pending_clear(link)
    if asked_at is None or timezone.now() - asked_at > timedelta(minutes=FORGET_CONFIRM_MINUTES):
        return "forget_expired", "That question has expired; send /forget <text> again."
    memory = Memory.objects.filter(pk=memory_id, owner=link.owner).exclude(status=Status.FORGOTTEN).first()
    if memory is None:
        return "forget_nothing", "That memory is already gone."
    memory_forget(memory=memory, actor=f"telegram:{link.telegram_user_id}", reason="forgotten from Telegram")
    return "forgotten", f"Forgotten: «{memory.content}»"


def _unlink(link: TelegramLink) -> tuple[str, str]:
    link.delete()
    return "unlinked_by_user", "This Telegram account is no longer linked. Your memories stay on the server."
