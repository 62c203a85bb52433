"""Photos and documents sent to the Telegram bot are kept as attachments of the user's turn, under
the same limits as the REST API's; a refused file gets a reply saying why and stores nothing."""

import json
import time

import pytest
from django.test import Client

from attachments.models import Attachment
from integrations.models import TelegramLink
from sessions.models import ConversationTurn
from tests.integrations.conftest import WEBHOOK_SECRET_TOKEN

pytestmark = pytest.mark.django_db

USER_ID = CHAT_ID = 4343
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 40 + b"\xff\xd9"


@pytest.fixture
def linked(user):
    return TelegramLink.objects.create(owner=user, telegram_user_id=USER_ID, chat_id=CHAT_ID, first_name="Ana")


@pytest.fixture
def send(django_capture_on_commit_callbacks):
    counter = {"update_id": 7000}

    def deliver(message: dict):
        counter["update_id"] += 1
        update = {
            "update_id": counter["update_id"],
            "message": {
                "message_id": counter["update_id"] * 10,
                "from": {"id": USER_ID, "is_bot": False, "first_name": "Ana"},
                "chat": {"id": CHAT_ID, "type": "private"},
                "date": int(time.time()),
                **message,
            },
        }
        with django_capture_on_commit_callbacks(execute=True):
            return Client().post(
                "/integrations/telegram/webhook/",
                json.dumps(update),
                content_type="application/json",
                HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN=WEBHOOK_SECRET_TOKEN,
            )

    return deliver


def test_a_photo_with_a_caption_is_kept_with_the_turn(user, api, linked, bot, send, attachment_dir):
    # given a photo the user sent, kept by the Bot API in two sizes
    bot.add_file("small-id", b"\xff\xd8\xff small", file_path="photos/file_0.jpg")
    bot.add_file("big-id", JPEG, file_path="photos/file_1.jpg")

    # when it arrives with a caption
    response = send(
        {
            "photo": [{"file_id": "small-id", "width": 90}, {"file_id": "big-id", "width": 1280}],
            "caption": "Sunset over the Douro",
        }
    )

    # then the largest size is stored, attached to the user's turn whose text is the caption
    assert response.status_code == 200
    attachment = Attachment.objects.get()
    turn = ConversationTurn.objects.get(pk=attachment.turn_id)
    assert (turn.role, turn.content) == ("user", "Sunset over the Douro")
    assert (attachment.filename, attachment.content_type, attachment.caption) == (
        f"photo_{turn.metadata['telegram']['message_id']}.jpg",
        "image/jpeg",
        "Sunset over the Douro",
    )
    assert (attachment_dir / attachment.storage_name).read_bytes() == JPEG
    assert [c.body for c in bot.calls if c.method == "file"] == [{"path": "photos/file_1.jpg"}]
    # and the owner finds it by its caption through the API, and the bot answered
    found = api.get("/api/v1/attachments/", {"q": "douro"}).json()["results"]
    assert [a["id"] for a in found] == [str(attachment.pk)]
    assert len(bot.messages_to(CHAT_ID)) == 1


def test_a_document_of_a_type_not_accepted_is_refused_with_the_reason(linked, bot, send, attachment_dir):
    bot.add_file("doc-id", b"<html><script>alert(1)</script></html>", file_path="documents/page.html")

    response = send({"document": {"file_id": "doc-id", "file_name": "page.html", "mime_type": "text/html"}})

    assert response.status_code == 200
    assert bot.messages_to(CHAT_ID) == [
        "I can't keep that file: Attachment type 'text/html' is not accepted; accepted: "
        "image/png, image/jpeg, image/gif, image/webp, application/pdf, text/plain, text/markdown, text/csv, "
        "application/json."
    ]
    assert (ConversationTurn.objects.count(), Attachment.objects.count()) == (0, 0)
    assert [p for p in attachment_dir.rglob("*") if p.is_file()] == []


def test_a_file_over_the_limit_is_refused_before_it_is_downloaded(settings, linked, bot, send):
    settings.ATTACHMENT_MAX_BYTES = 10
    bot.add_file("big-id", JPEG, file_path="photos/file_1.jpg")

    send({"photo": [{"file_id": "big-id"}]})

    assert bot.messages_to(CHAT_ID) == [f"I can't keep that file: it is {len(JPEG)} bytes; the limit is 10 bytes."]
    assert [c.method for c in bot.calls if c.method in ("getFile", "file")] == ["getFile"]
    assert (ConversationTurn.objects.count(), Attachment.objects.count()) == (0, 0)
