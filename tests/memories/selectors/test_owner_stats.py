"""owner_stats: one owner's memories by category and status, their sessions and extraction queue."""

from memories.selectors.owner_stats import owner_stats
from tests.factories import ChatSessionFactory, MemoryFactory


def test_counts_only_the_owners_rows(user, other_user):
    # given memories and sessions of two owners
    MemoryFactory(owner=user, category="preference", strength=0.8)
    MemoryFactory(owner=user, category="fact", strength=0.4, status="archived")
    MemoryFactory(owner=other_user, category="fact")
    ChatSessionFactory(owner=user)
    ChatSessionFactory(owner=other_user)

    # when the owner's figures are read
    stats = owner_stats(owner=user)

    # then only their rows count: the archived memory is not averaged, the strong one can be pinned
    assert stats["memories"] == {("preference", "active"): 1, ("fact", "archived"): 1}
    assert stats["active"] == {"strength": 0.8, "importance": 0.6}
    assert stats["pinnable"] == 1
    assert stats["sessions"] == {"open": 1}
    assert (stats["consolidated"], stats["awaiting_consolidation"]) == (0, 0)
    assert (stats["turns"], stats["episodes"], stats["jobs"]) == (0, 0, {})
