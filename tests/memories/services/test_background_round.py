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


def test_an_attached_web_process_embeds_the_turns_that_waited_too_long_itself(attached, settings):
    # given a turn stored by an attached web worker, still without a vector 30 s later (the background
    # process starved), with 10 s allowed, and the worker's once-a-second check due
    settings.BACKGROUND_MAX_LAG_SECONDS = 10
    owner = UserFactory(username="ana")
    session = ChatSessionFactory(owner=owner)
    turn_append_many(session=session, turns=TURNS[:1])
    ConversationTurn.objects.filter(session=session).update(received_at=timezone.now() - timedelta(seconds=30))
    turn_embeddings_overdue_reset()

    # when the worker stores the next turn
    answer = client_for(owner).post(f"/api/v1/sessions/{session.id}/turns/", TURNS[1], format="json")
    background_drain()

    # then it embedded both turns on its own background thread
    assert answer.status_code == 201
    assert ConversationTurn.objects.filter(session=session, embedding__isnull=True).count() == 0
    assert ConversationTurn.objects.filter(session=session).count() == 2


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
