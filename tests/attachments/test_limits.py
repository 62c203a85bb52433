"""Attachment limits: a file too large, of a type not accepted, or not what it claims to be is a
clear 4xx and nothing of the request is stored (no turn, no row, no file)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from attachments.models import Attachment
from sessions.models import ConversationTurn
from tests.attachments.files import TINY_PNG_SIZE, attachment, tiny_png
from tests.factories import ChatSessionFactory

HTML = b"<!DOCTYPE html><html><script>alert(1)</script></html>"


def _post(api, session, *files):
    return api.post(
        f"/api/v1/sessions/{session.id}/turns/",
        {"role": "user", "content": "See the file.", "attachments": list(files)},
        format="json",
    )


def _nothing_stored(session, folder) -> bool:
    session.refresh_from_db()
    files = [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []
    return (
        session.turn_count == 0
        and not ConversationTurn.objects.filter(session=session).exists()
        and not Attachment.objects.exists()
        and files == []
    )


def test_a_file_over_the_size_limit_is_a_413(settings, api, user, attachment_dir):
    # given a limit of 68 bytes and a 69-byte PNG
    settings.ATTACHMENT_MAX_BYTES = TINY_PNG_SIZE - 1
    session = ChatSessionFactory(owner=user)

    # when it is posted
    response = _post(api, session, attachment(tiny_png(), filename="big.png", content_type="image/png"))

    # then it is refused with the size and the limit, and nothing is stored
    assert response.status_code == 413
    assert response.json()["error"] == {
        "code": "attachment_too_large",
        "message": f"Attachment 'big.png' is {TINY_PNG_SIZE} bytes; the limit is {TINY_PNG_SIZE - 1} bytes.",
        "details": {
            "turn": 0,
            "attachment": 0,
            "filename": "big.png",
            "size": TINY_PNG_SIZE,
            "limit": TINY_PNG_SIZE - 1,
        },
    }
    assert _nothing_stored(session, attachment_dir)


def test_a_file_at_the_size_limit_is_stored(settings, api, user):
    settings.ATTACHMENT_MAX_BYTES = TINY_PNG_SIZE
    session = ChatSessionFactory(owner=user)

    response = _post(api, session, attachment(tiny_png(), filename="ok.png", content_type="image/png"))

    assert response.status_code == 201
    assert Attachment.objects.get().size == TINY_PNG_SIZE


@pytest.mark.parametrize(
    ("data", "content_type", "code"),
    [
        (HTML, "text/html", "unsupported_attachment_type"),
        (b"MZ\x90\x00", "application/x-msdownload", "unsupported_attachment_type"),
        (HTML, "text/plain", "attachment_type_mismatch"),
        (tiny_png(), "image/jpeg", "attachment_type_mismatch"),
        (b"<svg onload=alert(1)>", "text/markdown", "attachment_type_mismatch"),
        (b"\xff\xfe\x00broken", "text/plain", "attachment_type_mismatch"),
        (b"{not json", "application/json", "attachment_type_mismatch"),
    ],
)
def test_a_type_not_accepted_or_not_matching_the_bytes_is_a_415(api, user, attachment_dir, data, content_type, code):
    session = ChatSessionFactory(owner=user)

    response = _post(api, session, attachment(data, filename="file", content_type=content_type))

    assert response.status_code == 415
    assert response.json()["error"]["code"] == code
    assert response.json()["error"]["details"]["content_type"] == content_type
    assert _nothing_stored(session, attachment_dir)


def test_a_type_left_out_of_the_allowed_list_is_refused(settings, api, user, attachment_dir):
    settings.ATTACHMENT_ALLOWED_TYPES = ["image/png"]
    session = ChatSessionFactory(owner=user)

    response = _post(api, session, attachment(b"plain words", filename="a.txt", content_type="text/plain"))

    assert response.status_code == 415
    assert response.json()["error"]["details"]["allowed"] == ["image/png"]
    assert _nothing_stored(session, attachment_dir)


def test_bad_base64_and_too_many_files_are_400s(api, user, attachment_dir):
    session = ChatSessionFactory(owner=user)
    bad = {**attachment(b"x", filename="a.txt", content_type="text/plain"), "data": "not base64!"}

    not_base64 = _post(api, session, bad)
    too_many = _post(
        api, session, *[attachment(b"x", filename=f"{i}.txt", content_type="text/plain") for i in range(6)]
    )
    unknown_field = _post(
        api, session, {**attachment(b"x", filename="a.txt", content_type="text/plain"), "path": "/etc"}
    )

    assert not_base64.status_code == 400
    assert not_base64.json()["error"]["details"] == {"attachments": {"0": {"data": ["Not valid base64."]}}}
    assert too_many.status_code == 400
    assert too_many.json()["error"]["details"] == {
        "attachments": {"non_field_errors": ["Ensure this field has no more than 5 elements."]}
    }
    assert unknown_field.status_code == 400
    assert unknown_field.json()["error"]["details"] == {"attachments": {"0": {"path": ["Unknown field."]}}}
    assert _nothing_stored(session, attachment_dir)


def test_one_bad_file_in_a_bulk_request_stores_nothing(api, user, attachment_dir):
    # given a bulk of two turns, the second with an HTML page posing as text
    session = ChatSessionFactory(owner=user)
    turns = [
        {
            "role": "user",
            "content": "first",
            "attachments": [attachment(tiny_png(), filename="a.png", content_type="image/png")],
        },
        {
            "role": "user",
            "content": "second",
            "attachments": [attachment(HTML, filename="b.txt", content_type="text/plain")],
        },
    ]

    response = api.post(f"/api/v1/sessions/{session.id}/turns/", {"turns": turns}, format="json")

    assert response.status_code == 415
    assert response.json()["error"]["details"]["turn"] == 1
    assert _nothing_stored(session, attachment_dir)


@pytest.mark.django_db(transaction=True)
def test_files_written_before_a_failed_commit_are_removed(monkeypatch, api, user, attachment_dir):
    # given a failure after the files and rows were written, before the commit
    def broken(**kwargs):
        raise RuntimeError("broker down")

    monkeypatch.setattr("memories.signals.turn_embeddings_request", broken)
    session = ChatSessionFactory(owner=user)
    api.raise_request_exception = False

    # when a turn with a file is posted
    response = _post(api, session, attachment(tiny_png(), filename="a.png", content_type="image/png"))

    # then the request fails and neither the rows nor the file are left
    assert response.status_code == 500
    assert _nothing_stored(session, attachment_dir)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"ATTACHMENT_ALLOWED_TYPES": "image/png,text/html"},
            "ATTACHMENT_ALLOWED_TYPES: 'text/html' cannot be verified",
        ),
        ({"ATTACHMENT_MAX_BYTES": "lots"}, "ATTACHMENT_MAX_BYTES='lots' is not an integer"),
        ({"ATTACHMENT_MAX_BYTES": "20000000"}, "does not fit base64-encoded in MAX_REQUEST_BYTES"),
        ({"ATTACHMENT_STORAGE_OPTIONS": "{bad"}, "ATTACHMENT_STORAGE_OPTIONS is not valid JSON"),
        ({"ATTACHMENT_STORAGE_OPTIONS": "[1]"}, "ATTACHMENT_STORAGE_OPTIONS must be a JSON object"),
        ({"ATTACHMENT_RETENTION_DAYS": "-1"}, "ATTACHMENT_RETENTION_DAYS=-1 is below the minimum 0"),
    ],
)
def test_bad_attachment_settings_stop_the_service_at_start(env, message):
    root = Path(__file__).resolve().parents[2]
    code = "import django; django.setup()"
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "memory_project.settings", **env}

    result = subprocess.run([sys.executable, "-c", code], cwd=root, env=environment, capture_output=True, text=True)

    assert result.returncode == 1
    assert "ImproperlyConfigured" in result.stderr and message in result.stderr
