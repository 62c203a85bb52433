"""Erasing one agent's namespace takes that agent's attachments (rows and files) and no other."""

import pytest

from attachments.models import Attachment
from tests.attachments.files import share_png, tiny_png

pytestmark = pytest.mark.django_db(transaction=True)


def _share(api, agent: str, name: str) -> Attachment:
    session = api.post("/api/v1/sessions/", {"agent": agent}, format="json").json()["id"]
    return share_png(api, session_id=session, name=name)


def test_an_agent_erasure_removes_only_that_agents_attachments(api, user, attachment_dir):
    # given an attachment in a "coach" session and one in a default-agent session
    coach, default = _share(api, "coach", "coach.png"), _share(api, "", "default.png")

    # when the coach namespace is erased
    response = api.delete(f"/api/v1/data/?confirm={user.username}&agent=coach")

    # then the receipt counts the coach's attachment and its file, which are gone; the other stays
    assert response.status_code == 200, response.content
    counts = response.json()["counts"]
    assert (counts["attachments.Attachment"], counts["attachment_files"]) == (1, 1)
    assert list(Attachment.objects.values_list("pk", flat=True)) == [default.pk]
    assert not (attachment_dir / coach.storage_name).exists()
    assert (attachment_dir / default.storage_name).read_bytes() == tiny_png()
