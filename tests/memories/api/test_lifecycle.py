"""POST /api/v1/lifecycle/run/ and GET /api/v1/lifecycle/runs/, scoped by owner."""

import threading

from django.db import connection
from django.utils import timezone

from memories.services.lifecycle import runner
from tests.memories.services.lifecycle.conftest import memory_at


def test_post_runs_the_lifecycle_and_returns_202(api, user):
    # given an old memory
    memory_at(user, now=timezone.now(), days=17)

    # when the owner starts a run
    response = api.post("/api/v1/lifecycle/run/", {}, format="json")

    # then it ran for that owner
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "completed"
    assert body["trigger"] == "api"
    assert body["counts"]["decay"] == {"decayed": 1, "checkpoints": 1}
    assert {"id", "steps", "error", "started_at", "finished_at", "duration_ms"} <= set(body)


def test_unknown_fields_are_refused(api):
    # when the body carries a field the endpoint does not know
    response = api.post("/api/v1/lifecycle/run/", {"export_dir": "/etc"}, format="json")

    # then it is a 400 naming the field
    assert response.status_code == 400
    assert "export_dir" in response.content.decode()


def test_runs_are_listed_per_owner(api, other_api):
    # given one run by alice
    run_id = api.post("/api/v1/lifecycle/run/", {}, format="json").json()["id"]

    # when alice and bob list runs
    mine = api.get("/api/v1/lifecycle/runs/").json()
    theirs = other_api.get("/api/v1/lifecycle/runs/").json()

    # then alice sees her run, bob sees none
    assert mine["count"] == 1
    assert mine["results"][0]["id"] == run_id
    assert theirs["count"] == 0


def test_a_run_already_in_progress_is_a_409(api, user):
    # given another connection holding alice's lifecycle lock
    held, done = threading.Event(), threading.Event()

    def hold():
        try:
            assert runner._lock_try(user.pk)
            held.set()
            done.wait(timeout=30)
            runner._lock_release(user.pk)
        finally:
            connection.close()

    thread = threading.Thread(target=hold)
    thread.start()
    assert held.wait(timeout=30)

    # when alice starts a run
    try:
        response = api.post("/api/v1/lifecycle/run/", {}, format="json")
    finally:
        done.set()
        thread.join(timeout=30)

    # then it is refused as a conflict, recorded as a run that did nothing
    assert response.status_code == 409
    assert response.json()["status"] == "failed"
    assert response.json()["error"] == "another run in progress"
    assert response.json()["steps"] == []


def test_anonymous_requests_are_refused(client):
    assert client.post("/api/v1/lifecycle/run/").status_code in (401, 403)
