"""embeddings_recompute: every stored vector of the chosen owners computed again, in batches."""

import pytest

from memories.models import Memory
from memories.services.embeddings import embedding_get
from memories.services.reembed import embedding_dimension_problem, embeddings_recompute, embeddings_recompute_total
from tests.factories import MemoryFactory


def test_the_owners_memories_get_their_vectors_again_and_no_one_elses(user, other_user):
    # given two owners' memories whose vectors were lost
    mine = MemoryFactory(owner=user, content="I like green tea")
    also_mine = MemoryFactory(owner=user, content="I live in Porto")
    theirs = MemoryFactory(owner=other_user, content="I like coffee")
    Memory.objects.update(embedding=None)
    advanced = []

    # when the owner's vectors are recomputed one row at a time
    total = embeddings_recompute_total(owners=[user])
    counts = embeddings_recompute(owners=[user], batch_size=1, advance=advanced.append)

    # then each of their memories has its vector again, batch by batch, and the other owner's row is untouched
    assert total == 2
    assert counts == {"memories": 2, "turns": 0, "episodes": 0}
    assert advanced == [1, 1]
    for memory in (mine, also_mine):
        memory.refresh_from_db()
        assert list(memory.embedding) == pytest.approx(embedding_get(owner=user, text=memory.content))
    theirs.refresh_from_db()
    assert theirs.embedding is None


def test_the_configured_provider_fits_the_column(db):
    assert embedding_dimension_problem() == ""
