"""Turns are answered before they are embedded; their vectors follow, and none is ever left without one."""

import threading

import pytest

from memories.selectors.retrieval import memory_search
from memories.services.turn_embeddings import turn_embeddings, turn_embeddings_fill
from memories.tasks import turn_embeddings_sweep
from memory_project.background import background_drain
from sessions.models import ConversationTurn
from sessions.services.sessions import turn_append_many
from tests.conftest import client_for
from tests.factories import ChatSessionFactory, UserFactory
from tests.support import at_once

pytestmark = pytest.mark.django_db(transaction=True)

TURNS = [
    {"role": "user", "speaker": "Ana", "content": "We adopted a puppy called Biscuit last week."},
    {"role": "assistant", "speaker": "Bot", "content": "Congratulations! How is Biscuit settling in?"},
    {"role": "user", "speaker": "Ana", "content": "Yes, she sleeps all day."},
]


def _vectors(session) -> list:
    return [t.embedding for t in ConversationTurn.objects.filter(session=session).order_by("sequence")]


def test_posted_turns_are_answered_first_and_get_the_vectors_ingest_defines(monkeypatch):
    # given an open session, and a background thread that has not run yet
    owner = UserFactory(username="ana")
    session = ChatSessionFactory(owner=owner)
    gate = threading.Event()
    from memory_project import background

    background._pool.submit(gate.wait, 10)

    # when two turns are posted over the API, then a third
    api = client_for(owner)
    first = api.post(f"/api/v1/sessions/{session.id}/turns/", {"turns": TURNS[:2]}, format="json")
    second = api.post(f"/api/v1/sessions/{session.id}/turns/", TURNS[2], format="json")
    stored_before = _vectors(session)
    gate.set()
    background_drain()

    # then both answers came with every turn stored but none embedded yet, and afterwards each turn
    # has the vector of its own text averaged with the turn before it, as computed for a fresh session
    assert (first.status_code, second.status_code) == (201, 201)
    assert stored_before == [None, None, None]
    expected = turn_embeddings(session=ChatSessionFactory(owner=owner), turns=TURNS)
    stored = [list(v) for v in _vectors(session)]
    for got, want in zip(stored, expected):
        assert got == pytest.approx(want, abs=1e-6)
    assert len(stored) == 3


def test_a_new_turn_is_found_by_words_at_once_and_by_meaning_once_embedded():
    # given a turn stored but not yet embedded (its fill has not run)
    owner = UserFactory(username="ana")
    session = ChatSessionFactory(owner=owner)
    gate = threading.Event()
    from memory_project import background

    background._pool.submit(gate.wait, 10)
    turn_append_many(session=session, turns=[TURNS[0]])

    # when it is searched before and after its vector is stored
    before = memory_search(owner=owner, query="puppy Biscuit", scope="turns")["results"]
    gate.set()
    background_drain()
    after = memory_search(owner=owner, query="puppy Biscuit", scope="turns")["results"]

    # then full text found it both times, the vector side only the second time
    assert [(r["scores"]["lexical_rank"], r["scores"]["vector_rank"]) for r in before] == [(1, None)]
    assert [(r["scores"]["lexical_rank"], r["scores"]["vector_rank"]) for r in after] == [(1, 1)]


def test_turns_left_without_a_vector_by_a_crash_are_embedded_by_the_sweep():
    # given turns stored by a process that died before their fill ran (written here without one)
    owner = UserFactory(username="ana")
    session = ChatSessionFactory(owner=owner)
    for sequence, turn in enumerate(TURNS, start=1):
        ConversationTurn.objects.create(owner=owner, session=session, sequence=sequence, **turn)

    # when the periodic sweep runs, twice
    filled = turn_embeddings_sweep.apply().get()
    again = turn_embeddings_sweep.apply().get()

    # then the first run embedded all three, with the turn before each taken from the database, and
    # the second found nothing to do
    assert (filled, again) == (3, 0)
    expected = turn_embeddings(session=ChatSessionFactory(owner=owner), turns=TURNS)
    for got, want in zip(_vectors(session), expected):
        assert list(got) == pytest.approx(want, abs=1e-6)


def test_fills_running_at_once_never_embed_a_turn_twice(monkeypatch):
    # given 300 turns without vectors and two fills about to start together
    owner = UserFactory(username="ana")
    session = ChatSessionFactory(owner=owner)
    ConversationTurn.objects.bulk_create(
        [
            ConversationTurn(owner=owner, session=session, sequence=n, role="user", content=f"turn number {n}")
            for n in range(1, 301)
        ]
    )
    from memories.services import turn_embeddings as module

    embedded: list[str] = []
    real = module.turn_vectors

    def counting(*, owner, texts, before):
        embedded.extend(texts)
        return real(owner=owner, texts=texts, before=before)

    monkeypatch.setattr(module, "turn_vectors", counting)

    def fill():
        return turn_embeddings_fill(batch=50)

    # when both run (a fill that raised has no count, so the sum below tells)
    counts, _ = at_once(fill, fill, timeout=60)

    # then between them every turn was embedded exactly once
    assert sum(counts) == 300
    assert sorted(embedded) == sorted(f"turn number {n}" for n in range(1, 301))
    assert ConversationTurn.objects.filter(session=session, embedding__isnull=True).count() == 0


def test_the_metrics_count_the_owners_turns_awaiting_a_vector():
    # given alice with two turns awaiting their vector and bob with one
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    for owner, count in ((alice, 2), (bob, 1)):
        session = ChatSessionFactory(owner=owner)
        for n in range(1, count + 1):
            ConversationTurn.objects.create(owner=owner, session=session, sequence=n, role="user", content=f"t{n}")

    # when alice reads her metrics, before and after a fill
    before = client_for(alice).get("/api/v1/metrics/").json()["turns_awaiting_vector"]
    turn_embeddings_fill()
    after = client_for(alice).get("/api/v1/metrics/").json()["turns_awaiting_vector"]

    # then she sees her own two, then none
    assert (before, after) == (2, 0)
