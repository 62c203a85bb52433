"""An owner filled through every write path, and an enumeration of their rows over Django's models.

`owner_rows` walks every installed model on its own (it does not use erasure.plan): starting from
the user row it follows every foreign key, whatever its on_delete, until no new row is found. A
model added by anyone later is walked the same way.
"""

import base64
import json
from collections import defaultdict

from django.apps import apps
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client, RequestFactory

from integrations.models import TelegramLink, TelegramUpdate
from memories.models import EventRule, Memory
from memories.services.search_stats import search_stats_refresh
from tests.attachments.files import tiny_png
from tests.fakes.telegram_server import telegram_update

TELEGRAM_URL = "/integrations/telegram/webhook/"
WEBHOOK_SECRET = "whsec_erasure-test-secret"
SHARED_TEXT = "I prefer green tea over coffee in the morning."


def owner_rows(owner_id: int) -> dict[str, set]:
    """{model label: primary keys} of every row a chain of foreign keys leads from to the owner."""
    found: dict = defaultdict(set)
    found[get_user_model()] = set(get_user_model()._base_manager.filter(pk=owner_id).values_list("pk", flat=True))
    models = [m for m in apps.get_models(include_auto_created=True) if m._meta.managed and not m._meta.proxy]
    changed = True
    while changed:
        changed = False
        for model in models:
            for f in model._meta.concrete_fields:
                if not (f.is_relation and (f.many_to_one or f.one_to_one)) or not found.get(f.related_model):
                    continue
                targets = list(found[f.related_model])
                rows = set()
                for start in range(0, len(targets), 2000):
                    chunk = targets[start : start + 2000]
                    rows |= set(model._base_manager.filter(**{f"{f.attname}__in": chunk}).values_list("pk", flat=True))
                new = rows - found[model]
                if new:
                    found[model] |= new
                    changed = True
    return {m._meta.label: pks for m, pks in found.items() if pks}


def reachable_models() -> set[str]:
    """Labels of the models a chain of foreign keys leads from to the user model (rows or not)."""
    user_model = get_user_model()
    models = [m for m in apps.get_models(include_auto_created=True) if m._meta.managed and not m._meta.proxy]
    reached = {user_model}
    changed = True
    while changed:
        changed = False
        for model in models:
            if model in reached:
                continue
            if any(
                f.is_relation and (f.many_to_one or f.one_to_one) and f.related_model in reached
                for f in model._meta.concrete_fields
            ):
                reached.add(model)
                changed = True
    return {m._meta.label for m in reached}


def snapshot(owner_id: int) -> dict[str, list]:
    """Every row of the owner, in full (values), to compare before and after."""
    out = {}
    for label, pks in owner_rows(owner_id).items():
        model = apps.get_model(label)
        fields = [f.attname for f in model._meta.concrete_fields if f.get_internal_type() != "GeneratedField"]
        rows = model._base_manager.filter(pk__in=list(pks)).values_list(*fields)
        out[label] = sorted(json.dumps(list(r), default=str, sort_keys=True) for r in rows)
    return out


def fill(*, api, user, webhook_url: str, telegram_user_id: int, say, extra_text: str) -> None:
    """Everything a user of the service writes, through the same entry points clients use."""
    # turns, and the session's end (extraction: memories, entities, relations, history, episode)
    session = api.post("/api/v1/sessions/", {"title": "Morning plans", "agent": ""}, format="json").json()["id"]
    created = api.post(
        "/api/v1/webhooks/",
        {"url": webhook_url, "events": ["memory.added", "memory.updated"], "secret": WEBHOOK_SECRET},
        format="json",
    )
    assert created.status_code == 201, created.content
    # a memory group whose rule fills it as memories are written, and one nested in it
    life = api.post("/api/v1/groups/", {"name": "life", "rules": {"categories": ["preference", "fact"]}}, format="json")
    assert life.status_code == 201, life.content
    nested = {"name": "family", "parent": life.json()["id"], "rules": {"entities": ["Ana"]}}
    assert api.post("/api/v1/groups/", nested, format="json").status_code == 201
    turns = [
        {"role": "user", "content": SHARED_TEXT},
        {"role": "assistant", "content": "Noted, green tea it is."},
        {"role": "user", "content": f"Remember that my sister Ana lives in Porto. {extra_text}"},
        {"role": "user", "content": "I work as a nurse at the Santo António hospital in Porto."},
    ]
    # and a photo shared in a turn (an attachment: a row and a file)
    photo = {"filename": "porto.png", "content_type": "image/png", "data": base64.b64encode(tiny_png()).decode()}
    turns.append({"role": "user", "content": f"A photo of Porto {extra_text}", "attachments": [photo]})
    assert api.post(f"/api/v1/sessions/{session}/turns/", {"turns": turns}, format="json").status_code == 201
    assert api.post(f"/api/v1/sessions/{session}/end/").status_code == 202
    # a second agent's session, left open
    bot_session = api.post("/api/v1/sessions/", {"agent": "coach"}, format="json").json()["id"]
    coach_turn = {"role": "user", "content": f"I run 10 km every Sunday {extra_text}."}
    assert api.post(f"/api/v1/sessions/{bot_session}/turns/", coach_turn, format="json").status_code == 201
    # explicit memories, an edit, a forget
    written = api.post(
        "/api/v1/memories/", {"content": f"My bike is a red Trek {extra_text}", "category": "fact"}, format="json"
    )
    assert written.status_code == 201, written.content
    memory_id = written.json()["id"]
    assert api.patch(f"/api/v1/memories/{memory_id}/", {"importance": 0.9}, format="json").status_code == 200
    api.post("/api/v1/memories/", {"content": f"I dislike loud bars {extra_text}", "agent": "coach"}, format="json")
    # an import, and an edit of MEMORY.md
    heading = "### [a1b2c3] preference | 0.80 | 2026-01-10 | 2"
    memory_md = f"# Agent Memory\n\n## Active Memories\n\n{heading}\nI read science fiction {extra_text}\n"
    imported = api.post("/api/v1/import/", {"content": memory_md, "format": "memory-md"}, format="json")
    assert imported.status_code in (200, 201), imported.content
    view = api.get("/api/v1/memory-md/").json()
    edited = view["content"] + f"\n### preference\nI like hiking in the Alps {extra_text}\n"
    applied = api.put("/api/v1/memory-md/", {"content": edited, "version": view["version"]}, format="json")
    assert applied.status_code == 200, applied.content
    # the scratchpad, searches and context
    pad = {"current_focus": f"planning a trip {extra_text}", "active_projects": ["trip"]}
    assert api.put("/api/v1/scratchpad/", pad, format="json").status_code == 200
    query = {"query": "where does my sister live", "scope": "all"}
    assert api.post("/api/v1/search/", query, format="json").status_code == 200
    assert api.get("/api/v1/context/", {"query": "plan my morning"}).status_code == 200
    # the lifecycle: digests, MEMORY.md / USER.md exports, a run record
    assert api.post("/api/v1/lifecycle/run/", {}, format="json").status_code in (200, 201, 202)
    # Telegram: linked through a one-time code, then a message processed and one still queued
    _telegram_link(user=user, telegram_user_id=telegram_user_id, say=say)
    say("What did I say about tea?", user_id=telegram_user_id)
    TelegramUpdate.objects.create(
        update_id=telegram_user_id * 100,
        payload=telegram_update(
            telegram_user_id * 100, user_id=telegram_user_id, chat_id=telegram_user_id, text="not processed yet"
        ),
    )
    # a rule of the owner's own, BM25 statistics, and staff editing one of their memories in the admin
    EventRule.objects.create(owner=user, name="flag important", event_type="memory.write.important", action="flag")
    search_stats_refresh(owner_id=user.pk, corpus="memory")
    search_stats_refresh(owner_id=user.pk, corpus="turn")
    _admin_edit(Memory.objects.get(pk=memory_id))


def _telegram_link(*, user, telegram_user_id: int, say) -> None:
    from integrations.services.telegram import telegram_link_code_create

    code = telegram_link_code_create(owner=user).code
    response = say(f"/start {code}", user_id=telegram_user_id)
    assert response.status_code == 200
    assert TelegramLink.objects.filter(owner=user, telegram_user_id=telegram_user_id).exists()


def _admin_edit(memory: Memory) -> None:
    staff, _ = get_user_model().objects.get_or_create(username="admin-staff", defaults={"is_staff": True})
    request = RequestFactory().post("/admin/")
    request.user = staff
    admin.site._registry[Memory].log_change(request, memory, [{"changed": {"fields": ["content"]}}])


def telegram_say(settings_token_secret: str):
    """A sender of Telegram updates to the webhook, as Telegram would POST them."""
    counter = {"update_id": 5000}

    def send(text: str, *, user_id: int):
        counter["update_id"] += 1
        update = telegram_update(counter["update_id"], user_id=user_id, chat_id=user_id, text=text)
        return Client().post(
            TELEGRAM_URL,
            json.dumps(update),
            content_type="application/json",
            HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN=settings_token_secret,
        )

    return send
