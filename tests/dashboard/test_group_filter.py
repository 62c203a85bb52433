"""The memory browser's group filter (memory_groups): the list, its search, and the page's select."""

import pytest

from memory_groups.services import group_create
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


def test_the_memory_browser_filters_by_group_and_its_subgroups(alice, alice_client):
    # given project and decision memories in "work" > "decisions", and a preference outside
    project = MemoryFactory(owner=alice, category="project", content="Ship the Falcon launch plan")
    decision = MemoryFactory(owner=alice, category="decision", content="Keep PostgreSQL for the Falcon launch")
    MemoryFactory(owner=alice, category="preference", content="Green tea before the Falcon launch")
    work = group_create(owner=alice, name="work", rules={"categories": ["project"]})
    group_create(owner=alice, name="decisions", parent_id=work.pk, rules={"categories": ["decision"]})

    def contents(**params) -> list[str]:
        response = alice_client.get("/dashboard/api/memories/", params)
        assert response.status_code == 200, response.content
        return sorted(r["content"] for r in response.json()["results"])

    # then the list and the search within "work" hold exactly its memories and its subgroup's
    assert contents(group=str(work.pk)) == sorted([project.content, decision.content])
    assert contents(group="decisions") == [decision.content]
    assert contents(group="work", q="Falcon launch") == sorted([project.content, decision.content])
    # and an unknown group is a 400 with the reason
    unknown = alice_client.get("/dashboard/api/memories/", {"group": "hobbies"})
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (400, "unknown_group")
    # and the page offers the groups by path
    page = alice_client.get("/memories/").content.decode()
    assert f'<option value="{work.pk}">work</option>' in page
    assert ">work/decisions</option>" in page
