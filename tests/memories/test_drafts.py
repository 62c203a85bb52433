"""The draft every writer hands the services (`memories.drafts.MemoryDraft`); no database."""

from dataclasses import FrozenInstanceError, fields
from datetime import UTC, datetime

import pytest

from memories.api.serializers import MemoryCreateInputSerializer
from memories.drafts import MemoryContent, MemoryDraft
from memories.services.transfer.records import ImportRecord


def test_a_draft_settles_its_text_retention_and_structured_data():
    # when a draft is made with loose whitespace and no retention
    draft = MemoryDraft(content="  Fix  the\n login bug ", category="todo", structured_data=None)

    # then its text is normalised, its retention is the category's, its structured data a dict
    assert (draft.content, draft.retention, draft.structured_data) == ("Fix the login bug", "long", {})


def test_a_given_retention_is_kept():
    assert MemoryDraft(content="Fix the login bug", category="todo", retention="short").retention == "short"


def test_a_draft_cannot_be_changed():
    draft = MemoryDraft(content="User prefers tea")

    with pytest.raises(FrozenInstanceError):
        draft.content = "User prefers coffee"


def test_every_field_of_the_write_api_is_a_draft_field():
    # POST /memories/ hands its validated data to MemoryDraft as it is
    assert set(MemoryCreateInputSerializer().fields) <= {f.name for f in fields(MemoryDraft)}


def test_an_import_record_drafts_everything_it_says_as_an_import():
    # given a record that sets every field a memory's content has, and its own
    observed = datetime(2025, 3, 1, tzinfo=UTC)
    record = ImportRecord(
        line=3,
        content=" Deploys  go out on Fridays ",
        category="rule",
        importance=0.7,
        retention="permanent",
        subject="deploys",
        predicate="day",
        structured_data={"value": "Friday"},
        confidence=0.9,
        observed_at=observed,
        status="archived",
        agent="ops",
        origin="line 3",
    )

    # when it is drafted for the import's agent and status
    draft = record.draft(agent="work", status="active")

    # then every content field is the record's, the text normalised; agent, status and source are
    # the import's
    said = {f.name: getattr(draft, f.name) for f in fields(MemoryContent)}
    assert said == {
        "content": "Deploys go out on Fridays",
        "category": "rule",
        "importance": 0.7,
        "retention": "permanent",
        "subject": "deploys",
        "predicate": "day",
        "structured_data": {"value": "Friday"},
        "confidence": 0.9,
        "observed_at": observed,
    }
    assert (draft.agent, draft.status, draft.source) == ("work", "active", "import")


def test_an_import_record_without_retention_is_kept_long():
    record = ImportRecord(line=None, content="Prefers tea", category="todo")

    assert record.draft(agent="", status=None).retention == "long"
