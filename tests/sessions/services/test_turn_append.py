"""Concurrent writers to one session: every turn is kept, numbered without gaps or duplicates."""

from functools import partial

import pytest

from sessions.models import ChatSession, ConversationTurn
from tests.conftest import client_for
from tests.factories import ChatSessionFactory, UserFactory
from tests.support import at_once


@pytest.mark.django_db(transaction=True)
def test_concurrent_bulk_posts_keep_every_turn_in_a_gapless_sequence(dispatched):
    # given an open session of carol and three clients posting bulks to it at the same time
    owner = UserFactory(username="carol")
    session = ChatSessionFactory(owner=owner)
    clients = [client_for(owner) for _ in range(3)]

    def post(client, writer: int):
        turns = [{"role": "user", "content": f"w{writer}-{i}"} for i in range(40)]
        return client.post(f"/api/v1/sessions/{session.id}/turns/", {"turns": turns}, format="json").status_code

    # when they all post
    statuses, errors = at_once(*(partial(post, c, n) for n, c in enumerate(clients)), timeout=60)

    # then all 120 turns are stored, numbered 1..120, each writer's turns contiguous and in its order
    assert errors == []
    assert statuses == [201, 201, 201]
    stored = list(ConversationTurn.objects.filter(session=session).order_by("sequence"))
    assert [t.sequence for t in stored] == list(range(1, 121))
    for writer in range(3):
        mine = [t for t in stored if t.content.startswith(f"w{writer}-")]
        assert [t.content for t in mine] == [f"w{writer}-{i}" for i in range(40)]
        assert [t.sequence for t in mine] == list(range(mine[0].sequence, mine[0].sequence + 40))
    # and the row counts them all, their estimated tokens too (each "wN-M" is 3 tokens)
    counted = ChatSession.objects.get(pk=session.pk)
    assert (counted.turn_count, counted.unsummarized_tokens) == (120, 360)
    assert sum(t.token_count for t in stored) == 360
