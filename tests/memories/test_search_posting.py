"""Search postings: the triggers of migration 0005 keep one row per lexeme of each searchable memory or turn."""

import pytest
from django.db import connection
from django.db.models import F

from memories.models import Memory, SearchCorpus, SearchPosting
from tests.factories import ConversationTurnFactory, MemoryFactory

pytestmark = pytest.mark.django_db


def _postings(document, corpus=SearchCorpus.MEMORY) -> set[tuple]:
    rows = SearchPosting.objects.filter(corpus=corpus, document_id=document.pk)
    return set(rows.values_list("owner_id", "lexeme", "frequency", "document_length"))


def _all_postings() -> set[tuple]:
    return set(SearchPosting.objects.values_list("corpus", "document_id", "lexeme", "frequency"))


def test_a_stored_memory_gets_one_posting_per_lexeme_with_its_frequency_and_length(user):
    # when a memory is stored
    memory = MemoryFactory(owner=user, content="Tea in the morning, green tea at night")

    # then each stemmed lexeme has a posting (stop words have none), with its count and the length
    assert _postings(memory) == {
        (user.pk, "tea", 2, 4),
        (user.pk, "morn", 1, 4),
        (user.pk, "green", 1, 4),
        (user.pk, "night", 1, 4),
    }


def test_a_stored_turn_gets_postings_for_its_speaker_content_and_cjk_ngrams(user):
    # when a turn with a speaker and Chinese text is stored
    turn = ConversationTurnFactory(session__owner=user, speaker="Mei", content="我喜欢绿茶")

    # then the speaker, the text as English parsing sees it (one word) and the character n-grams
    # the text is indexed by each have a posting
    lexemes = {row[1] for row in _postings(turn, SearchCorpus.TURN)}
    assert lexemes == {"mei", "我喜欢绿茶", "我", "喜", "欢", "绿", "茶", "我喜", "喜欢", "欢绿", "绿茶"}
    assert {row[0] for row in _postings(turn, SearchCorpus.TURN)} == {user.pk}


def test_a_bulk_insert_posts_every_searchable_row_of_the_statement(user):
    # when three memories are inserted in one statement, one of them already forgotten
    rows = Memory.objects.bulk_create(
        [
            MemoryFactory.build(owner=user, content="kayak river"),
            MemoryFactory.build(owner=user, content="river delta", status="archived"),
            MemoryFactory.build(owner=user, content="delta blues", status="forgotten"),
        ]
    )

    # then the active and the archived one are posted, the forgotten one is not
    assert [_postings(m) for m in rows] == [
        {(user.pk, "kayak", 1, 2), (user.pk, "river", 1, 2)},
        {(user.pk, "river", 1, 2), (user.pk, "delta", 1, 2)},
        set(),
    ]


def test_editing_the_text_rewrites_the_postings(user):
    # given a memory about tea
    memory = MemoryFactory(owner=user, content="green tea")

    # when its text is changed
    memory.content = "black coffee"
    memory.save()

    # then only the new words are posted
    assert _postings(memory) == {(user.pk, "black", 1, 2), (user.pk, "coffe", 1, 2)}


@pytest.mark.parametrize(
    ("status", "posted"),
    [("active", True), ("archived", True), ("forgotten", False), ("rejected", False), ("pending_review", False)],
)
def test_only_active_and_archived_memories_are_posted(user, status, posted):
    # when a memory is stored with a status
    memory = MemoryFactory(owner=user, content="kayak", status=status)

    # then it is posted only if search may return it
    assert _postings(memory) == ({(user.pk, "kayak", 1, 1)} if posted else set())


def test_forgetting_removes_the_postings_and_restoring_brings_them_back(user):
    # given a posted memory and another one
    memory = MemoryFactory(owner=user, content="kayak river")
    other = MemoryFactory(owner=user, content="river delta")
    before_other = _postings(other)

    # when it is forgotten (as the lifecycle does: a set-based UPDATE)
    Memory.objects.filter(pk=memory.pk).update(status="forgotten")

    # then its postings are gone and the other memory's are untouched
    assert _postings(memory) == set()
    assert _postings(other) == before_other

    # when it is restored
    Memory.objects.filter(pk=memory.pk).update(status="active")

    # then it is posted again
    assert _postings(memory) == {(user.pk, "kayak", 1, 2), (user.pk, "river", 1, 2)}


def test_updates_that_leave_text_and_searchability_alone_do_not_touch_the_postings(user):
    # given a posted memory
    memory = MemoryFactory(owner=user, content="kayak river")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT ctid::text FROM memories_searchposting WHERE document_id = %s ORDER BY lexeme", [memory.pk]
        )
        before = cursor.fetchall()

    # when its strength decays, it is archived and it is saved whole by the ORM
    Memory.objects.filter(pk=memory.pk).update(strength=F("strength") * 0.5)
    Memory.objects.filter(pk=memory.pk).update(status="archived")
    memory.refresh_from_db()
    memory.save()

    # then the posting rows are the very same row versions (no trigger rewrote them)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT ctid::text FROM memories_searchposting WHERE document_id = %s ORDER BY lexeme", [memory.pk]
        )
        assert cursor.fetchall() == before
    assert len(before) == 2


def test_deleting_memories_turns_and_their_owner_removes_their_postings(user, other_user):
    # given memories and turns of two owners
    memory = MemoryFactory(owner=user, content="kayak")
    turn = ConversationTurnFactory(session__owner=user, content="paddle")
    kept = MemoryFactory(owner=other_user, content="kayak")
    kept_postings = _postings(kept)

    # when one memory is deleted
    memory.delete()

    # then its postings are gone, the turn's remain
    assert _postings(memory) == set()
    assert _postings(turn, SearchCorpus.TURN) == {(user.pk, "paddl", 1, 1)}

    # when the owner is deleted
    user.delete()

    # then nothing of theirs is posted, and the other owner's postings are untouched
    assert _all_postings() == {("memory", kept.pk, "kayak", 1)}
    assert _postings(kept) == kept_postings
