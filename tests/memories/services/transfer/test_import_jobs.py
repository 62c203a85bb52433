"""Issue 12, finding 5: a large import runs as a background job with progress, not in its request."""

import hashlib
import json
import threading

import pytest

from memories.models import ImportJob, Memory
from memories.services import embeddings
from memories.services.import_jobs import import_job_drain
from tests.conftest import client_for
from tests.factories import UserFactory
from tests.support import wait_for


def jsonl(n: int) -> str:
    # Unrelated contents, so the merge decision adds each one (no near duplicates among them)
    lines = (
        json.dumps({"content": f"Code {hashlib.sha256(str(i).encode()).hexdigest()[:24]}", "category": "fact"})
        for i in range(n)
    )
    return "".join(line + "\n" for line in lines)


class GatedEmbedder:
    """The hashing embedder, holding the import at its `gate_at`-th text until released."""

    def __init__(self, inner, gate_at: int):
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.calls, self.gate_at, self.release = 0, gate_at, threading.Event()

    def embed(self, texts):
        self.calls += 1
        if self.calls == self.gate_at:
            self.release.wait(timeout=30)
        return self.inner.embed(texts)


@pytest.mark.django_db(transaction=True)
def test_a_large_import_answers_202_and_its_job_shows_progress_then_the_report(settings, monkeypatch):
    # given a threshold below the file's size, and an embedder that pauses the import at entry 11
    settings.MEMORY_IMPORT_SYNC_MAX_BYTES = 1000
    owner = UserFactory(username="erin")
    api = client_for(owner)
    gated = GatedEmbedder(embeddings.get_embedder(), gate_at=11)
    monkeypatch.setattr(embeddings, "get_embedder", lambda query=False: gated)
    text = jsonl(40)

    # when the file is posted
    response = api.post("/api/v1/import/", {"format": "jsonl", "content": text}, format="json")

    # then the request answers at once with the job to poll
    assert response.status_code == 202, response.content
    job = response.json()
    assert response["Location"] == job["url"] == f"/api/v1/import/jobs/{job['id']}/"
    assert (job["status"], job["size"], job["report"]) == ("pending", len(text.encode()), None)
    # and while it runs, the job reports how far it got (its writes are not visible yet)
    url = job["url"]
    assert wait_for(lambda: api.get(url).json()["processed"] >= 10, timeout=30)
    running = api.get(url).json()
    assert (running["status"], running["total"]) == ("running", 40)
    assert 10 <= running["processed"] < 40 and 25 <= running["percent"] < 100
    assert Memory.objects.filter(owner=owner).count() == 0
    gated.release.set()
    import_job_drain()
    done = api.get(url).json()
    assert (done["status"], done["processed"], done["total"], done["percent"]) == ("done", 40, 40, 100)
    assert (done["report"]["entries"], done["report"]["added"]) == (40, 40)
    assert Memory.objects.filter(owner=owner).count() == 40
    assert ImportJob.objects.get(pk=job["id"]).text == ""  # the upload is not kept once imported
    # and another owner cannot see the job
    assert client_for(UserFactory(username="frank")).get(url).status_code == 404


@pytest.mark.django_db(transaction=True)
def test_a_background_import_with_a_bad_entry_fails_with_its_lines_and_stores_nothing(settings):
    settings.MEMORY_IMPORT_SYNC_MAX_BYTES = 100
    owner = UserFactory(username="gina")
    api = client_for(owner)
    text = jsonl(5) + json.dumps({"content": "bad", "observed_at": "0001-01-01T00:00:00+14:00"}) + "\n"

    job = api.post("/api/v1/import/", {"format": "jsonl", "content": text}, format="json").json()
    import_job_drain()

    failed = api.get(job["url"]).json()
    assert failed["status"] == "failed"
    assert [(p["line"], p["field"]) for p in failed["problems"]] == [(6, "observed_at")]
    assert Memory.objects.filter(owner=owner).count() == 0


@pytest.mark.django_db
def test_a_large_import_cannot_be_forced_into_the_request(settings, api):
    settings.MEMORY_IMPORT_SYNC_MAX_BYTES = 100

    response = api.post("/api/v1/import/", {"format": "jsonl", "content": jsonl(5), "background": False}, format="json")

    assert response.status_code == 413
    assert response.json()["error"]["code"] == "too_large"
    assert ImportJob.objects.count() == 0 and Memory.objects.count() == 0


@pytest.mark.django_db
def test_a_small_import_still_answers_in_its_request(api):
    response = api.post("/api/v1/import/", {"format": "jsonl", "content": jsonl(3)}, format="json")

    assert response.status_code == 200
    assert response.json()["added"] == 3
    assert ImportJob.objects.count() == 0


@pytest.mark.django_db
def test_the_cli_draws_a_progress_bar_on_stderr(user, tmp_path):
    from io import StringIO

    from django.core.management import call_command

    path = tmp_path / "memories.jsonl"
    path.write_text(jsonl(4))
    out, err = StringIO(), StringIO()

    call_command("import", str(path), "--owner", "alice", stdout=out, stderr=err)

    assert "[##############################] 100% 4/4" in err.getvalue()
    assert "4 entries: 4 added" in out.getvalue()
