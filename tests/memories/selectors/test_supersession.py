"""Search puts a superseded memory below the memory that replaced it (issue 11)."""

from memories.models import MemoryRelation
from memories.selectors.supersession import current_first
from tests.factories import ChatSessionFactory, MemoryFactory


def _hit(memory, score, session=None):
    return {
        "type": "memory",
        "id": str(memory.pk),
        "status": memory.status,
        "score": score,
        "content": memory.content,
        "session_id": str(session.pk) if session else None,
    }


def _replaced(user, old_text: str, new_text: str):
    """An archived memory and the memory that superseded it."""
    old = MemoryFactory(owner=user, content=old_text, status="archived")
    new = MemoryFactory(owner=user, content=new_text)
    MemoryRelation.objects.create(owner=user, source=new, target=old, type="supersedes")
    return old, new


def test_a_superseded_memory_moves_just_below_its_replacement(user):
    # given an archived memory superseded by a newer one, ranked above it, and an unrelated hit
    old = MemoryFactory(owner=user, content="User works at Alibaba", status="archived")
    new = MemoryFactory(owner=user, content="User moved to Tencent")
    other = MemoryFactory(owner=user, content="User likes hiking")
    MemoryRelation.objects.create(owner=user, source=new, target=old, type="supersedes")
    results = [_hit(old, 0.9), _hit(other, 0.8), _hit(new, 0.7)]

    # when the results are put in order
    ordered = current_first(results=results, owner_id=user.pk)

    # then the old one follows the new one, with a score no higher than it
    assert [r["content"] for r in ordered] == ["User likes hiking", "User moved to Tencent", "User works at Alibaba"]
    assert [r["score"] for r in ordered] == [0.8, 0.7, 0.7]


def test_results_without_a_superseded_hit_are_left_alone(user, django_assert_num_queries):
    # given active hits only
    a = MemoryFactory(owner=user, content="A")
    b = MemoryFactory(owner=user, content="B")
    results = [_hit(a, 0.9), _hit(b, 0.5)]

    # when they are put in order, then nothing moves and no query is spent
    with django_assert_num_queries(0):
        assert current_first(results=results, owner_id=user.pk) == results


def test_another_owners_relation_does_not_reorder(user, other_user):
    # given the same pair linked under another owner only
    old = MemoryFactory(owner=user, content="Old", status="archived")
    new = MemoryFactory(owner=user, content="New")
    MemoryRelation.objects.create(owner=other_user, source=new, target=old, type="supersedes")
    results = [_hit(old, 0.9), _hit(new, 0.5)]

    # when put in order, then the order stays
    assert [r["content"] for r in current_first(results=results, owner_id=user.pk)] == ["Old", "New"]


def test_a_superseded_memory_also_moves_below_what_was_said_with_its_replacement(user):
    # given "works at Google" superseded by "left Google", and the new employer said in the same
    # conversation as the leaving, but linked to nothing; and a hit from another conversation
    before, after, elsewhere = (ChatSessionFactory(owner=user) for _ in range(3))
    old, left = _replaced(user, "User works at Google as a product manager", "User left Google")
    stripe = MemoryFactory(owner=user, content="User is at Stripe now, same PM role")
    other = MemoryFactory(owner=user, content="User likes hiking")
    results = [_hit(left, 0.9, after), _hit(old, 0.85, before), _hit(other, 0.8, elsewhere), _hit(stripe, 0.7, after)]

    # when the results are put in order
    ordered = current_first(results=results, owner_id=user.pk)

    # then the old employer follows the new one too, and the other conversation's hit keeps its place
    assert [r["content"] for r in ordered] == [
        "User left Google",
        "User likes hiking",
        "User is at Stripe now, same PM role",
        "User works at Google as a product manager",
    ]
    assert [r["score"] for r in ordered] == [0.9, 0.8, 0.7, 0.7]


def test_what_another_conversation_said_does_not_move_a_superseded_memory(user):
    # given the replacement from one conversation, and a lower hit from another
    before, after, elsewhere = (ChatSessionFactory(owner=user) for _ in range(3))
    old, left = _replaced(user, "User works at Google", "User left Google")
    other = MemoryFactory(owner=user, content="User likes hiking")
    results = [_hit(old, 0.9, before), _hit(left, 0.8, after), _hit(other, 0.7, elsewhere)]

    # when the results are put in order
    ordered = current_first(results=results, owner_id=user.pk)

    # then the old one moves just below its replacement, not below the other conversation's hit
    assert [r["content"] for r in ordered] == ["User left Google", "User works at Google", "User likes hiking"]
