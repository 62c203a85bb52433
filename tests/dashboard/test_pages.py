"""Dashboard pages through Django's test client: login, owner scoping, escaping, no CDN."""

import re

import pytest
from django.test import Client

from memories.drafts import MemoryDraft
from memories.models import MemoryEvent
from memories.services.memories import memory_create
from tests.dashboard.conftest import PASSWORD
from tests.dashboard.scenes import XSS, scene
from tests.factories import ChatSessionFactory

pytestmark = pytest.mark.django_db

PAGES = ["/", "/memories/", "/decay/", "/graph/", "/sessions/", "/moderation/", "/chat/", "/live/"]
EXTERNAL_ASSET = re.compile(r"<(script|link|img|iframe)\b[^>]*\b(src|href)\s*=\s*[\"']?\s*(https?:)?//", re.IGNORECASE)


def test_anonymous_visit_leads_to_the_login_form():
    response = Client().get("/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/"
    login = Client().get(response["Location"])
    assert login.status_code == 200
    assert b'name="username"' in login.content and b"csrfmiddlewaretoken" in login.content


def test_a_user_logs_in_with_a_password_and_out_with_a_post(alice):
    client = Client(enforce_csrf_checks=True)
    page = client.get("/accounts/login/")
    token = page.cookies["csrftoken"].value
    response = client.post(
        "/accounts/login/", {"username": "alice", "password": PASSWORD, "csrfmiddlewaretoken": token, "next": "/"}
    )
    assert response.status_code == 302 and response["Location"] == "/"
    assert client.get("/").status_code == 200
    token = client.cookies["csrftoken"].value
    assert client.post("/accounts/logout/", {"csrfmiddlewaretoken": token}).status_code == 302
    assert client.get("/").status_code == 302


def test_every_page_renders_for_a_user_with_data_and_loads_only_local_assets(alice, alice_client):
    data = scene(alice)
    urls = PAGES + [f"/memories/{data['tea'].pk}/", f"/sessions/{data['session'].pk}/"]
    for url in urls:
        response = alice_client.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        assert not EXTERNAL_ASSET.search(html), (url, EXTERNAL_ASSET.search(html).group(0))
        assert '<script type="module" src="/static/dashboard/app.js">' in html
        assert "/static/dashboard/style.css" in html


def test_memory_detail_shows_provenance_relations_entities_history_and_curve(alice, alice_client):
    data = scene(alice)
    html = alice_client.get(f"/memories/{data['tea'].pk}/").content.decode()
    assert "Drinks green tea every morning" in html
    assert f"/sessions/{data['session'].pk}/#turn-1" in html  # source turn linked to its session
    assert '<span class="chip rel">contradicts</span>' in html and "Drinks coffee every morning" in html
    assert 'id="chart-strength"' in html and '"projection"' in html
    assert "Revert to this" not in html  # a single version has nothing to revert to
    porto = alice_client.get(f"/memories/{data['porto'].pk}/").content.decode()
    assert "Ana" in porto and "person" in porto


def test_an_empty_owner_sees_every_page(bob_client):
    for url in PAGES:
        assert bob_client.get(url).status_code == 200, url


def test_another_owners_objects_are_404_and_never_listed(alice, bob, bob_client):
    data = scene(alice)
    assert bob_client.get(f"/memories/{data['tea'].pk}/").status_code == 404
    assert bob_client.get(f"/sessions/{data['session'].pk}/").status_code == 404
    for url in PAGES:
        assert b"green tea" not in bob_client.get(url).content, url
    # a non-staff user's ?owner= is ignored: still their own (empty) memory
    assert b"green tea" not in bob_client.get("/memories/?owner=alice").content
    assert bob_client.get(f"/memories/{data['tea'].pk}/?owner=alice").status_code == 404


def test_staff_switch_owner(alice, staff_client):
    data = scene(alice)
    html = staff_client.get("/memories/?owner=alice").content.decode()
    assert "Drinks green tea every morning" in html
    assert '<option value="alice" selected>' in html
    assert staff_client.get(f"/memories/{data['tea'].pk}/?owner=alice").status_code == 200
    assert staff_client.get(f"/memories/{data['tea'].pk}/").status_code == 404  # not staff's own memory
    assert staff_client.get("/?owner=nobody").status_code == 404


def test_the_memory_list_with_an_agent_postgresql_cannot_hold_says_so_and_lists_unfiltered(alice, alice_client):
    # given alice's memories
    scene(alice)

    # when she opens the memory list for an agent whose name holds a NUL byte
    page = alice_client.get("/memories/", {"agent": "a\x00b"})

    # then the page says what is wrong and lists her memories without that filter, as for a bad q or group
    assert page.status_code == 200
    html = page.content.decode()
    assert '<li class="msg-error">agent must be text of at most 100 characters</li>' in html
    assert "Drinks green tea every morning" in html


def test_memory_text_is_escaped_everywhere(alice, alice_client):
    data = scene(alice)
    evil = memory_create(owner=alice, draft=MemoryDraft(content=XSS, category="fact"), actor="test")
    turn_html = "<script>alert(2)</script>"
    from sessions.services.sessions import turn_append_many

    turn_append_many(session=data["session"], turns=[{"role": "user", "content": turn_html}])
    for url in PAGES + [f"/memories/{evil.pk}/", f"/sessions/{data['session'].pk}/"]:
        html = alice_client.get(url).content.decode()
        assert XSS not in html, url
        assert turn_html not in html, url
    detail = alice_client.get(f"/memories/{evil.pk}/").content.decode()
    assert "&lt;img src=x onerror=alert(1)&gt;" in detail
    # in the JSON the browser script reads, "<" is escaped too, so it cannot close the script tag
    browser = alice_client.get("/memories/").content.decode()
    assert "\\u003Cimg src=x onerror=alert(1)\\u003E" in browser


def test_detail_forms_edit_act_and_revert_with_history(alice, alice_client):
    tea = scene(alice)["tea"]
    url = f"/memories/{tea.pk}/"
    response = alice_client.post(
        url + "edit/", {"content": "Drinks jasmine tea every morning", "category": "preference", "importance": "0.7"}
    )
    assert response.status_code == 302 and response["Location"] == url
    alice_client.post(url + "action/", {"action": "pin"})
    tea.refresh_from_db()
    assert tea.content == "Drinks jasmine tea every morning" and tea.pinned
    first = MemoryEvent.objects.filter(memory=tea).order_by("created_at", "id").first()
    alice_client.post(url + "revert/", {"event": first.pk})
    tea.refresh_from_db()
    assert tea.content == "Drinks green tea every morning"
    events = list(
        MemoryEvent.objects.filter(memory=tea).order_by("created_at", "id").values_list("event_type", "actor")
    )
    assert [e for e, _ in events] == ["add", "update", "pin", "revert"]
    assert events[-1][1] == "dashboard:alice"
    html = alice_client.get(url).content.decode()
    assert "Revert to this" in html and "reverted to the version of" in html


def test_detail_forms_refuse_bad_input_with_a_message(alice, alice_client):
    tea = scene(alice)["tea"]
    url = f"/memories/{tea.pk}/"
    alice_client.post(url + "edit/", {"content": "", "category": "preference", "importance": "2"})
    tea.refresh_from_db()
    assert tea.content == "Drinks green tea every morning"
    follow = alice_client.post(url + "edit/", {"content": "x", "category": "nope"}, follow=True)
    assert b"category must be one of" in follow.content
    assert alice_client.post(url + "revert/", {"event": "999999"}).status_code == 404


def test_post_without_csrf_token_is_refused(alice):
    tea = scene(alice)["tea"]
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.post(f"/memories/{tea.pk}/action/", {"action": "forget"}).status_code == 403
    assert (
        client.post(
            "/dashboard/api/memories/bulk/", '{"ids": [], "action": "forget"}', content_type="application/json"
        ).status_code
        == 403
    )
    tea.refresh_from_db()
    assert tea.status == "active"


def test_a_long_list_pages_and_a_staff_member_keeps_the_owner_in_the_page_links(staff_client, alice, monkeypatch):
    # given three of alice's sessions and two to a page
    monkeypatch.setattr("dashboard.views.SESSIONS_PER_PAGE", 2)
    ChatSessionFactory.create_batch(3, owner=alice)

    # when a staff member opens the second page of alice's sessions
    page = staff_client.get("/sessions/?page=2&owner=alice").content.decode()

    # then the pager links back to the first page of alice's, and no further
    pager = re.search(r'<nav class="pager">(.*?)</nav>', page, re.DOTALL).group(1)
    assert re.findall(r'href="([^"]*)"', pager) == ["?page=1&amp;owner=alice"]
    assert "page 2 of 2" in pager and "← newer" in pager
