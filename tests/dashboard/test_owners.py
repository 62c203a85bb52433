"""Whose data a dashboard request looks at (dashboard.owners): a staff member's ?owner= pick."""

import pytest

from tests.dashboard.scenes import scene

pytestmark = pytest.mark.django_db


def test_an_owner_name_postgresql_cannot_hold_is_a_404_on_pages_and_endpoints(alice, staff_client):
    # given alice's memories, which a staff member may look at
    scene(alice)

    # when the staff member asks for an owner whose name holds a NUL byte
    endpoint = staff_client.get("/dashboard/api/overview/", {"owner": "alice\x00"})
    page = staff_client.get("/memories/", {"owner": "\x00"})

    # then both are a 404 as for an unknown owner (no user can have that name), the endpoint's in the error shape
    assert endpoint.status_code == 404
    assert endpoint.json() == {"error": {"code": "not_found", "message": "Not found.", "details": None}}
    assert page.status_code == 404
