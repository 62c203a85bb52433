"""The draft every writer hands the services (`memories.drafts.MemoryDraft`); no database."""

from dataclasses import FrozenInstanceError, fields

import pytest

from memories.api.serializers import MemoryCreateInputSerializer
from memories.drafts import MemoryDraft


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
