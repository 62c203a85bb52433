"""The Telegram bot end to end: Telegram's webhook calls in, the fake Bot API on loopback hears the replies."""

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from integrations.models import TelegramLink, TelegramLinkCode, TelegramUpdate
from integrations.services.telegram import INVALID_CODE, NOT_LINKED, telegram_link_code_create
from memories.drafts import MemoryDraft
from memories.models import Memory, Status
from memories.services.memories import memory_create
from memories.services.responder import OFFLINE_NOTICE
from sessions.models import ChatSession, ConversationTurn
from tests.fakes.telegram_server import telegram_update
from tests.integrations.conftest import WEBHOOK_SECRET_TOKEN

pytestmark = pytest.mark.django_db

USER_ID = 4242
CHAT_ID = 4242
URL = "/integrations/telegram/webhook/"


def deliver(update: dict, *, secret: str | None = WEBHOOK_SECRET_TOKEN, capture=None):
    """POST an update as Telegram does; after-commit work (processing, replies) runs before returning."""
    headers = {} if secret is None else {"HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN": secret}
    with capture(execute=True):
        return Client().post(URL, json.dumps(update), content_type="application/json", **headers)


@pytest.fixture
def say(django_capture_on_commit_callbacks):
    """say(text) sends the next message of Ana (USER_ID) and returns the webhook's response."""
    counter = {"update_id": 1000}

    def send(text: str, *, user_id: int = USER_ID, chat_id: int = CHAT_ID, first_name: str = "Ana"):
        counter["update_id"] += 1
        update = telegram_update(
            counter["update_id"], user_id=user_id, chat_id=chat_id, text=text, first_name=first_name
        )
        return deliver(update, capture=django_capture_on_commit_callbacks)

    return send


@pytest.fixture
def linked(user):
    return TelegramLink.objects.create(owner=user, telegram_user_id=USER_ID, chat_id=CHAT_ID, first_name="Ana")


def test_link_chat_new_session_and_the_memory_is_in_the_rest_api(user, user_client, api, bot, say):
    # given a link code from the dashboard endpoint
    response = user_client.post("/integrations/telegram/link-code/")
    assert response.status_code == 201
    code = response.json()["code"]
    assert response.json()["command"] == f"/start {code}"

    # when Ana sends /start <code>
    assert say(f"/start {code}").status_code == 200

    # then her Telegram account is linked to the owner and the code is used up
    link = TelegramLink.objects.get(telegram_user_id=USER_ID)
    assert (link.owner, link.chat_id, link.first_name) == (user, CHAT_ID, "Ana")
    assert TelegramLinkCode.objects.get(code=code).used_by_telegram_user_id == USER_ID
    assert bot.messages_to(CHAT_ID)[0].startswith("Linked to alice.")

    # when she chats a few turns, stating a preference
    for text in ("Hello there", "I prefer green tea.", "Good night"):
        assert say(text).status_code == 200

    # then the turns are stored in one open telegram session, with the bot's replies
    session = ChatSession.objects.get(owner=user, channel="telegram")
    assert (session.external_id, session.status) == (str(CHAT_ID), "open")
    turns = list(ConversationTurn.objects.filter(session=session).order_by("sequence"))
    assert [(t.role, t.speaker) for t in turns] == [("user", "Ana"), ("assistant", "assistant")] * 3
    assert [t.content for t in turns if t.role == "user"] == ["Hello there", "I prefer green tea.", "Good night"]
    replies = bot.messages_to(CHAT_ID)[1:]
    assert replies == [t.content for t in turns if t.role == "assistant"]
    assert all(r.startswith(OFFLINE_NOTICE) for r in replies)
    assert not Memory.objects.filter(owner=user).exists()

    # when she sends /new
    say("/new")

    # then the session ended and was consolidated, a new one is open, and the bot said so
    session.refresh_from_db()
    assert (session.status, session.consolidated) == ("ended", True)
    assert ChatSession.objects.filter(owner=user, channel="telegram", status="open").count() == 1
    assert bot.messages_to(CHAT_ID)[-1] == (
        "Started a new conversation. What mattered in the last one is being turned into memories."
    )

    # and the preference is a memory the REST API shows, taken from her turn
    body = api.get("/api/v1/memories/").json()
    contents = [(m["category"], m["content"]) for m in body["results"]]
    assert contents == [("preference", "Ana prefers green tea")]
    assert Memory.objects.get(owner=user).source_session == session


def test_wrong_or_missing_secret_is_403_and_stores_nothing(bot, django_capture_on_commit_callbacks):
    # given an update from someone holding a valid code
    update = telegram_update(1, user_id=USER_ID, chat_id=CHAT_ID, text="/start ABCDEFGH")
    before = [m.objects.count() for m in (TelegramUpdate, TelegramLink, ChatSession, ConversationTurn, Memory)]

    # when it arrives with a wrong secret token, or none
    wrong = deliver(update, secret="not-the-secret", capture=django_capture_on_commit_callbacks)
    missing = deliver(update, secret=None, capture=django_capture_on_commit_callbacks)

    # then both are refused and nothing is stored or sent
    assert (wrong.status_code, missing.status_code) == (403, 403)
    after = [m.objects.count() for m in (TelegramUpdate, TelegramLink, ChatSession, ConversationTurn, Memory)]
    assert after == before == [0, 0, 0, 0, 0]
    assert bot.calls == []


def test_without_a_configured_secret_the_endpoint_does_not_exist(settings, bot, django_capture_on_commit_callbacks):
    settings.TELEGRAM_WEBHOOK_SECRET = ""
    update = telegram_update(1, user_id=USER_ID, chat_id=CHAT_ID, text="hi")
    response = deliver(update, secret="", capture=django_capture_on_commit_callbacks)
    assert response.status_code == 404
    assert TelegramUpdate.objects.count() == 0


@pytest.mark.parametrize("body", [b"not json", b"[]", b'{"update_id": "1"}', b'{"update_id": -1}', b"{}"])
def test_malformed_updates_are_400(bot, body):
    response = Client().post(
        URL, body, content_type="application/json", HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN=WEBHOOK_SECRET_TOKEN
    )
    assert response.status_code == 400
    assert TelegramUpdate.objects.count() == 0


@pytest.mark.parametrize(("user_id", "chat_id"), [(2**63, CHAT_ID), (USER_ID, -(2**63) - 1), (True, CHAT_ID)])
def test_an_update_from_an_id_no_telegram_account_can_have_is_ignored(linked, bot, say, user_id, chat_id):
    # when an update names a sender or chat outside the 64-bit ids Telegram gives out
    response = say("Remember that my PIN is 1234", user_id=user_id, chat_id=chat_id)

    # then it is acknowledged and recorded as ignored, nobody is answered and nothing is stored
    assert response.status_code == 200
    update = TelegramUpdate.objects.get()
    assert (update.status, update.outcome, update.attempts) == ("done", "ignored", 1)
    assert bot.calls == []
    assert (ChatSession.objects.count(), ConversationTurn.objects.count(), Memory.objects.count()) == (0, 0, 0)


def test_an_unlinked_user_gets_the_clear_reply_and_nothing_is_stored(bot, say):
    # when a stranger writes to the bot
    response = say("Remember that my PIN is 1234", user_id=999, chat_id=999)

    # then they are told how to link, and nothing of theirs is kept
    assert response.status_code == 200
    assert bot.messages_to(999) == [NOT_LINKED]
    assert NOT_LINKED.endswith("send /start <code> here.")
    assert (ChatSession.objects.count(), ConversationTurn.objects.count(), Memory.objects.count()) == (0, 0, 0)
    assert TelegramLink.objects.count() == 0
    update = TelegramUpdate.objects.get()
    assert (update.status, update.outcome, update.payload) == ("done", "unlinked", {})


def test_an_invalid_expired_or_used_code_does_not_link(user, bot, say):
    expired = telegram_link_code_create(owner=user)
    TelegramLinkCode.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    used = telegram_link_code_create(owner=user)
    TelegramLinkCode.objects.filter(pk=used.pk).update(used_at=timezone.now())

    for code in ("WRONG123", expired.code, used.code):
        say(f"/start {code}")

    assert bot.messages_to(CHAT_ID) == [INVALID_CODE] * 3
    assert TelegramLink.objects.count() == 0


def test_a_redelivered_update_is_ignored(linked, bot, django_capture_on_commit_callbacks):
    update = telegram_update(77, user_id=USER_ID, chat_id=CHAT_ID, text="Hello once")

    first = deliver(update, capture=django_capture_on_commit_callbacks)
    second = deliver(update, capture=django_capture_on_commit_callbacks)

    assert (first.status_code, second.status_code) == (200, 200)
    assert ConversationTurn.objects.filter(role="user").count() == 1
    assert len(bot.messages_to(CHAT_ID)) == 1


def test_memories_lists_what_is_pinned(user, linked, bot, say):
    memory_create(
        owner=user,
        draft=MemoryDraft(content="Prefers green tea over coffee", category="preference", importance=0.8),
        actor="t",
    )
    memory_create(owner=user, draft=MemoryDraft(content="Lives in Porto", category="fact", importance=0.7), actor="t")
    memory_create(
        owner=user, draft=MemoryDraft(content="Maybe likes chess", category="preference", importance=0.1), actor="t"
    )

    say("/memories")

    assert bot.messages_to(CHAT_ID) == [
        "What I keep in mind about you:\n1. [preference] Prefers green tea over coffee\n2. [fact] Lives in Porto"
    ]
    assert ConversationTurn.objects.count() == 0


def test_memories_when_there_are_none(linked, bot, say):
    say("/memories")
    assert bot.messages_to(CHAT_ID) == ["I don't keep anything in mind about you yet. Talk to me, then send /new."]


def test_forget_asks_and_yes_forgets(user, linked, bot, say):
    # given two memories
    tea = memory_create(
        owner=user, draft=MemoryDraft(content="Prefers green tea over coffee", category="preference"), actor="t"
    )
    porto = memory_create(owner=user, draft=MemoryDraft(content="Lives in Porto"), actor="t")

    # when Ana asks to forget the tea preference
    say("/forget green tea")

    # then the bot asks first, and nothing is forgotten yet
    assert bot.messages_to(CHAT_ID) == ["Forget: «Prefers green tea over coffee»? Reply /yes to confirm"]
    tea.refresh_from_db()
    assert tea.status == Status.ACTIVE

    # when she confirms
    say("/yes")

    # then that memory (only) is forgotten, by her
    assert bot.messages_to(CHAT_ID)[-1] == "Forgotten: «Prefers green tea over coffee»"
    tea.refresh_from_db()
    porto.refresh_from_db()
    assert (tea.status, porto.status) == (Status.FORGOTTEN, Status.ACTIVE)
    assert list(tea.events.order_by("id").values_list("event_type", "actor")) == [
        ("add", "t"),
        ("forget", f"telegram:{USER_ID}"),
    ]

    # and a second /yes has nothing left to confirm
    say("/yes")
    assert bot.messages_to(CHAT_ID)[-1] == "There is nothing to confirm. Use /forget <text> first."


def test_anything_but_yes_cancels_the_forget(user, linked, bot, say):
    tea = memory_create(
        owner=user, draft=MemoryDraft(content="Prefers green tea over coffee", category="preference"), actor="t"
    )

    say("/forget green tea")
    say("no")
    say("/yes")

    assert bot.messages_to(CHAT_ID)[1:] == [
        "Cancelled: nothing was forgotten.",
        "There is nothing to confirm. Use /forget <text> first.",
    ]
    tea.refresh_from_db()
    assert tea.status == Status.ACTIVE
    assert ConversationTurn.objects.count() == 0


def test_forget_without_a_match(user, linked, bot, say):
    memory_create(owner=user, draft=MemoryDraft(content="Lives in Porto"), actor="t")
    say("/forget quantum chromodynamics")
    assert bot.messages_to(CHAT_ID) == ["I found no memory matching «quantum chromodynamics»."]


def test_a_reply_is_retried_when_the_bot_api_answers_500_once(linked, bot, say):
    # given a Bot API that fails the next call
    bot.fail_next(500)

    # when Ana writes
    say("Hello there")

    # then the reply was sent again and delivered once
    sends = [c for c in bot.calls if c.method == "sendMessage"]
    assert [c.status for c in sends] == [500, 200]
    assert sends[0].body == sends[1].body
    assert set(sends[1].body) == {"chat_id", "text"}  # plain text: no parse_mode
    assert len(bot.messages_to(CHAT_ID)) == 1


def test_a_rate_limited_reply_waits_and_is_sent(linked, bot, say):
    bot.fail_next(429, retry_after=0)
    say("/help")
    assert [c.status for c in bot.calls] == [429, 200]


def test_a_reply_that_keeps_failing_is_given_up_and_the_turns_are_kept(settings, linked, bot, say):
    settings.TELEGRAM_SEND_MAX_ATTEMPTS = 3
    bot.fail_next(502, times=5)

    response = say("Hello there")

    assert response.status_code == 200
    assert [c.status for c in bot.calls] == [502, 502, 502]
    assert list(ConversationTurn.objects.order_by("sequence").values_list("role", flat=True)) == ["user", "assistant"]


def test_new_without_an_open_session_just_starts_one(user, linked, bot, say):
    say("/new")
    assert bot.messages_to(CHAT_ID) == ["Started a new conversation."]
    assert list(ChatSession.objects.values_list("channel", "external_id", "status")) == [
        ("telegram", str(CHAT_ID), "open")
    ]


def test_link_code_endpoint_needs_a_login_and_post(user_client):
    assert Client().post("/integrations/telegram/link-code/").status_code == 401
    assert user_client.get("/integrations/telegram/link-code/").status_code == 405
    assert TelegramLinkCode.objects.count() == 0


def test_link_code_command(user):
    out = StringIO()
    call_command("telegram_link_code", "alice", stdout=out)
    code = out.getvalue().strip().splitlines()[-1]
    assert TelegramLinkCode.objects.get(code=code).owner == user
    with pytest.raises(CommandError, match="no such user: nobody"):
        call_command("telegram_link_code", "nobody", stdout=StringIO())


def test_set_webhook_command_sends_the_secret_token(bot):
    out = StringIO()
    call_command("telegram_set_webhook", "https://memory.example.com/integrations/telegram/webhook/", stdout=out)
    assert out.getvalue() == "Webhook set: https://memory.example.com/integrations/telegram/webhook/\n"
    assert [(c.method, c.body) for c in bot.calls] == [
        (
            "setWebhook",
            {
                "url": "https://memory.example.com/integrations/telegram/webhook/",
                "secret_token": WEBHOOK_SECRET_TOKEN,
                "allowed_updates": ["message"],
                "drop_pending_updates": False,
            },
        )
    ]


def test_set_webhook_command_needs_token_and_secret(settings, bot):
    settings.TELEGRAM_WEBHOOK_SECRET = ""
    with pytest.raises(CommandError, match="TELEGRAM_WEBHOOK_SECRET is not set"):
        call_command("telegram_set_webhook", "https://example.com/hook/", stdout=StringIO())
    settings.TELEGRAM_BOT_TOKEN = ""
    with pytest.raises(CommandError, match="TELEGRAM_BOT_TOKEN is not set"):
        call_command("telegram_set_webhook", "https://example.com/hook/", stdout=StringIO())
    assert bot.calls == []
