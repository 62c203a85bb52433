"""Embedded `serve`'s background process does the pipeline's work in rounds (turn vectors, then
extraction jobs); an attached web worker fills the turns itself when they waited too long."""

from datetime import timedelta

import pytest
from django.utils import timezone

from memories.models import Memory
from memories.services.background_round import background_step
from memories.services.turn_embeddings import turn_embeddings_overdue_reset
from memory_project.background import background_drain
from sessions.models import ConversationTurn, ExtractionJob
from sessions.services.sessions import session_end, turn_append_many
from tests.conftest import client_for
from tests.factories import ChatSessionFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

TURNS = [
    {"role": "user", "speaker": "Ana", "content": "Remember that my sister Lucia lives in Porto."},
    {"role": "assistant", "speaker": "Bot", "content": "Noted: Lucia lives in Porto."},
]


def stored_turns_aged(*, turns: list[dict], ages: list[int]):
    """A session of a new owner with `turns` stored `ages` seconds ago, the once-a-second overdue
    check due."""
    session = ChatSessionFactory(owner=UserFactory(username="ana"))
    turn_append_many(session=session, turns=turns)
    for sequence, age in enumerate(ages, start=1):
        ConversationTurn.objects.filter(session=session, sequence=sequence).update(
            received_at=timezone.now() - timedelta(seconds=age)
        )
    turn_embeddings_overdue_reset()
    return session


def vectors_present(session) -> list[bool]:
    turns = ConversationTurn.objects.filter(session=session).order_by("sequence")
    return [vector is not None for vector in turns.values_list("embedding", flat=True)]


def test_a_turn_post_embeds_as_many_waiting_turns_as_it_stores_when_they_waited_too_long(attached, settings):
    # given two turns stored by an attached web worker, still without vectors 30 and 20 s later (the
    # background process starved), with 10 s allowed, and the worker's once-a-second check due
    settings.BACKGROUND_MAX_LAG_SECONDS = 10
    session = stored_turns_aged(turns=TURNS, ages=[30, 20])

    # when the worker stores one more turn
    answer = client_for(session.owner).post(f"/api/v1/sessions/{session.id}/turns/", TURNS[0], format="json")
    background_drain()

    # then before answering it embedded one waiting turn, the oldest, and left the rest to the
    # background process: its own thread queued no fill
    assert answer.status_code == 201
    assert vectors_present(session) == [True, False, False]


def test_a_post_of_many_turns_helps_with_at_most_64_waiting_turns(attached, settings):
    # given 70 turns waiting 100 down to 31 s for their vectors, with 10 s allowed
    settings.BACKGROUND_MAX_LAG_SECONDS = 10
    waiting = [{"role": "user", "content": f"Note {i}: the meeting moved to room {i}."} for i in range(70)]
    session = stored_turns_aged(turns=waiting, ages=[100 - i for i in range(70)])

    # when 66 more are posted at once
    posted = [{"role": "user", "content": f"Later note {i}."} for i in range(66)]
    answer = client_for(session.owner).post(f"/api/v1/sessions/{session.id}/turns/", {"turns": posted}, format="json")
    background_drain()

    # then the post embedded the 64 oldest before answering, not 66
    assert answer.status_code == 201
    assert vectors_present(session) == [True] * 64 + [False] * (6 + 66)


def test_a_turn_post_does_not_embed_turns_that_have_not_waited_too_long(attached, settings):
    # given a turn stored by an attached web worker 5 s ago, with 10 s allowed
    settings.BACKGROUND_MAX_LAG_SECONDS = 10
    session = stored_turns_aged(turns=TURNS[:1], ages=[5])

    # when the worker stores the next turn
    answer = client_for(session.owner).post(f"/api/v1/sessions/{session.id}/turns/", TURNS[1], format="json")

    # then both turns are stored, neither embedded: that is the background process's work
    assert answer.status_code == 201
    assert vectors_present(session) == [False, False]


def test_a_model_that_fails_while_a_turn_post_helps_does_not_fail_the_post(attached, settings):
    # given an overdue turn, and an embedding service that cannot be reached
    settings.BACKGROUND_MAX_LAG_SECONDS = 10
    session = stored_turns_aged(turns=TURNS[:1], ages=[30])
    settings.EMBEDDING_PROVIDER = "openai"
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"  # discard port: nothing listens
    settings.OPENAI_API_KEY = "test"
    settings.LLM_MAX_RETRIES = 0

    # when the worker stores the next turn
    answer = client_for(session.owner).post(f"/api/v1/sessions/{session.id}/turns/", TURNS[1], format="json")

    # then the turn is stored and answered as usual; both wait for their vectors
    assert answer.status_code == 201
    assert answer.json()["content"] == TURNS[1]["content"]
    assert vectors_present(session) == [False, False]


def test_a_round_embeds_the_waiting_turns_and_runs_the_pending_jobs(attached):
    # given turns stored and a session ended by an attached web worker
    owner = UserFactory(username="ana")
    session = ChatSessionFactory(owner=owner)
    turn_append_many(session=session, turns=TURNS)
    session_end(session=session)

    # when the background process runs rounds until one finds nothing to do
    rounds = [background_step()]
    while rounds[-1]:
        rounds.append(background_step())

    # then every turn has its vector, every job is done, and the turn's statement is a memory
    assert ConversationTurn.objects.filter(session=session, embedding__isnull=True).count() == 0
    assert ConversationTurn.objects.filter(session=session).count() == 2
    assert set(ExtractionJob.objects.filter(session=session).values_list("status", flat=True)) == {"done"}
    assert list(Memory.objects.filter(owner=owner).values_list("content", flat=True)) == [
        "Ana's sister Lucia lives in Porto"
    ]
    assert rounds[-1] == 0


def test_a_round_with_nothing_waiting_does_nothing():
    assert background_step() == 0
