"""The context-window view's endpoint (dashboard.endpoints.context): GET /api/v1/context/'s block, previewed."""

import pytest

from memory_groups.services import group_create
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


def test_a_group_narrows_the_context_to_its_memories_and_those_of_the_groups_below(alice, alice_client):
    # given project and decision memories in "work" > "decisions", and a preference outside
    project = MemoryFactory(owner=alice, category="project", content="Ship the Falcon launch plan")
    decision = MemoryFactory(owner=alice, category="decision", content="Keep PostgreSQL for the Falcon launch")
    tea = MemoryFactory(owner=alice, category="preference", content="Green tea before the Falcon launch")
    work = group_create(owner=alice, name="work", rules={"categories": ["project"]})
    group_create(owner=alice, name="decisions", parent_id=work.pk, rules={"categories": ["decision"]})

    def ids(**params) -> set[str]:
        response = alice_client.get("/dashboard/api/context/", params)
        assert response.status_code == 200, response.content
        return {m["id"] for m in response.json()["memories"]}

    # then the context within a group holds exactly its memories and its subgroup's, by name or id
    assert ids() == {str(project.pk), str(decision.pk), str(tea.pk)}
    assert ids(group="work", query="Falcon launch") == {str(project.pk), str(decision.pk)}
    assert ids(group=str(work.pk)) == {str(project.pk), str(decision.pk)}
    assert ids(group="decisions") == {str(decision.pk)}


def test_an_unknown_group_is_a_400_as_in_the_rest_api(alice, alice_client):
    # when alice previews the context of a group she does not have
    response = alice_client.get("/dashboard/api/context/", {"group": "hobbies"})

    # then it is the REST API's 400, naming the group
    assert response.status_code == 400
    assert response.json() == {
        "error": {"code": "unknown_group", "message": "No memory group 'hobbies'.", "details": {"group": "hobbies"}}
    }
