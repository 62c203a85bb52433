"""`memory_forget_matching`: "forget …" and the memory_forget tool forget the single best match, keep
the row and its history, and search never returns it again."""

from memories.drafts import MemoryDraft
from memories.models import Memory, MemoryEvent
from memories.selectors.retrieval import memory_search
from memories.services.decisions import memory_forget_matching, memory_write
from tests.engine import event_types
from tests.factories import ChatSessionFactory, MemoryFactory, UserFactory
from tests.support import db_snapshot


def _three(owner):
    return [
        memory_write(owner=owner, draft=MemoryDraft(content=text, category="preference"), actor="test").memory
        for text in ("User likes jazz", "User likes classical music", "User lives in Lisbon")
    ]


def test_the_best_match_is_forgotten_and_nothing_else(user):
    # given three memories
    jazz, classical, lisbon = _three(user)

    # when the user asks to forget that she likes jazz
    forgotten = memory_forget_matching(owner=user, query="User likes jazz", actor="user:alice")

    # then only the jazz memory is forgotten, with a forget event carrying the request
    assert forgotten.pk == jazz.pk
    jazz.refresh_from_db()
    assert (jazz.status, jazz.pinned, jazz.strength) == ("forgotten", False, 0.6)
    assert event_types(jazz) == ["add", "forget"]
    event = MemoryEvent.objects.get(memory=jazz, event_type="forget")
    assert (event.actor, event.reason, event.before["status"], event.after["status"]) == (
        "user:alice",
        "forget request: User likes jazz",
        "active",
        "forgotten",
    )
    for other in (classical, lisbon):
        other.refresh_from_db()
        assert (other.status, event_types(other)) == ("active", ["add"])
    # and search never returns it again, whatever the query
    for query in ("jazz", "User likes jazz", "music"):
        found = memory_search(owner=user, query=query, top_k=10)["results"]
        assert str(jazz.pk) not in {r["id"] for r in found}


def test_the_event_names_the_session_and_reason_given(user):
    # given a memory and a session in which the request was made
    jazz = memory_write(owner=user, draft=MemoryDraft(content="User likes jazz"), actor="test").memory
    session = ChatSessionFactory(owner=user)

    # when it is forgotten with a reason, on behalf of that session
    memory_forget_matching(owner=user, query="jazz", actor="system:extraction", session=session, reason="asked")

    # then the forget event records both
    event = MemoryEvent.objects.get(memory=jazz, event_type="forget")
    assert (event.session_id, event.reason) == (session.pk, "asked")


def test_no_good_match_forgets_nothing(user):
    # given three memories
    _three(user)
    before = db_snapshot(user)

    # when the user asks to forget something unrelated
    forgotten = memory_forget_matching(owner=user, query="quantum chromodynamics", actor="user:alice")

    # then nothing is forgotten and nothing changed
    assert forgotten is None
    assert db_snapshot(user) == before


def test_forgetting_twice_does_not_forget_a_second_memory_by_accident(user):
    # given jazz already forgotten, and a memory that shares little with the request
    jazz = memory_write(owner=user, draft=MemoryDraft(content="User likes jazz"), actor="test").memory
    lisbon = memory_write(owner=user, draft=MemoryDraft(content="User lives in Lisbon"), actor="test").memory
    memory_forget_matching(owner=user, query="User likes jazz", actor="test")
    before = db_snapshot(user)

    # when the same request is made again
    again = memory_forget_matching(owner=user, query="User likes jazz", actor="test")

    # then there is nothing left to forget
    assert again is None
    assert db_snapshot(user) == before
    assert Memory.objects.get(pk=lisbon.pk).status == "active"
    assert Memory.objects.get(pk=jazz.pk).status == "forgotten"


def test_another_owners_memory_is_never_forgotten(user):
    # given bob's jazz memory and none of alice's
    bob = UserFactory(username="bob")
    bobs = MemoryFactory(owner=bob, content="User likes jazz")
    before = db_snapshot(bob)

    # when alice asks to forget jazz
    forgotten = memory_forget_matching(owner=user, query="User likes jazz", actor="user:alice")

    # then nothing of bob's changes
    assert forgotten is None
    assert db_snapshot(bob) == before
    assert Memory.objects.get(pk=bobs.pk).status == "active"


def test_an_agent_forgets_only_in_its_own_namespace(user):
    # given the same memory for the default agent and for "helper"
    default = MemoryFactory(owner=user, content="User likes jazz", agent="")
    helper = MemoryFactory(owner=user, content="User likes jazz", agent="helper")

    # when "helper" forgets it
    forgotten = memory_forget_matching(owner=user, query="User likes jazz", actor="agent", agent="helper")

    # then only helper's copy is forgotten
    assert forgotten.pk == helper.pk
    assert Memory.objects.get(pk=helper.pk).status == "forgotten"
    assert Memory.objects.get(pk=default.pk).status == "active"
