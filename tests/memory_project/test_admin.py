"""The record inlines on the admin's change pages (memory_project.admin.RecordInline): each row listed
read-only, no row to add and none to delete."""

import pytest
from django.test import Client

from memories.models import MemoryEvent
from tests.factories import ConversationTurnFactory, MemoryFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client():
    client = Client()
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    return client


def _record_inline(page: str, prefix: str) -> None:
    assert f'<input type="hidden" name="{prefix}-TOTAL_FORMS" value="1"' in page
    assert f'<input type="hidden" name="{prefix}-MAX_NUM_FORMS" value="0"' in page
    assert f'name="{prefix}-0-DELETE"' not in page


def test_a_sessions_turns_are_listed_read_only(admin_client):
    # given a session with one turn
    turn = ConversationTurnFactory(content="Booked the dentist for Friday")

    # when an admin opens the session
    response = admin_client.get(f"/admin/chat_sessions/chatsession/{turn.session.pk}/change/")

    # then the turn is shown as text, with nothing to add, edit or delete
    page = response.content.decode()
    assert response.status_code == 200
    _record_inline(page, "turns")
    assert "<p>Booked the dentist for Friday</p>" in page
    assert 'name="turns-0-content"' not in page


def test_a_memorys_history_is_listed_read_only(admin_client):
    # given a memory with one history row
    memory = MemoryFactory(content="Likes green tea")
    MemoryEvent.objects.create(owner=memory.owner, memory=memory, event_type="add", actor="agent:tests")

    # when an admin opens the memory
    response = admin_client.get(f"/admin/memories/memory/{memory.pk}/change/")

    # then the history row is shown as text, with nothing to add, edit or delete
    page = response.content.decode()
    assert response.status_code == 200
    _record_inline(page, "events")
    assert "<p>agent:tests</p>" in page
    assert 'name="events-0-actor"' not in page
