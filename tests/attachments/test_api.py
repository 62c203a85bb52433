"""Attachments through the turns API: stored with their turn, listed, searched by caption,
downloaded safely, linked to the memories extracted from their turn, scoped by owner."""

from datetime import timedelta

import pytest

from attachments.models import Attachment
from memories.models import MemorySource
from tests.attachments.files import TINY_PNG_SIZE, attachment, tiny_png
from tests.factories import ChatSessionFactory

MARKDOWN = b"# Packing list\n\n- passport\n- sunscreen\n"


def _post(api, session, content: str, *files, role: str = "user"):
    return api.post(
        f"/api/v1/sessions/{session.id}/turns/",
        {"role": role, "content": content, "attachments": list(files)},
        format="json",
    )


def test_a_turn_with_an_image_stores_the_file_linked_to_the_turn(api, user, attachment_dir):
    # given an open session of the user
    session = ChatSessionFactory(owner=user)

    # when a turn is posted with a PNG and a caption
    png = tiny_png()
    response = _post(
        api,
        session,
        "Here is the view from the hotel.",
        attachment(png, filename="view.png", content_type="image/png", caption="Beach at sunset"),
    )

    # then the turn and its attachment are stored, the file holds exactly the bytes sent
    assert response.status_code == 201, response.content
    body = response.json()
    stored = Attachment.objects.get()
    assert str(stored.turn_id) == body["id"]
    assert body["attachments"] == [
        {
            "id": str(stored.id),
            "turn_id": body["id"],
            "session_id": str(session.id),
            "memory_ids": [],
            "filename": "view.png",
            "content_type": "image/png",
            "size": TINY_PNG_SIZE,
            "sha256": stored.sha256,
            "caption": "Beach at sunset",
            "created_at": stored.created_at.isoformat().replace("+00:00", "Z"),
            "expires_at": stored.expires_at.isoformat().replace("+00:00", "Z"),
            "download_url": f"/api/v1/attachments/{stored.id}/download/",
        }
    ]
    assert (attachment_dir / stored.storage_name).read_bytes() == png
    assert stored.storage_name.startswith(f"{user.pk}/") and "view.png" not in stored.storage_name
    assert stored.expires_at - stored.created_at == timedelta(days=365)
    # and the detail endpoint answers the same
    assert api.get(f"/api/v1/attachments/{stored.id}/").json() == body["attachments"][0]


def test_download_is_served_as_a_file_never_as_a_page(api, user):
    # given an image and a Markdown file shared in a turn
    session = ChatSessionFactory(owner=user)
    files = [
        attachment(tiny_png(), filename="../../etc/view.png", content_type="image/png"),
        attachment(MARKDOWN, filename='packing "list".md', content_type="text/markdown"),
    ]
    ids = [a["id"] for a in _post(api, session, "Two files.", *files).json()["attachments"]]

    # when each is downloaded
    image = api.get(f"/api/v1/attachments/{ids[0]}/download/", HTTP_ACCEPT="text/html")
    text = api.get(f"/api/v1/attachments/{ids[1]}/download/")

    # then the bytes come back as a download with their verified type, no sniffing, sandboxed
    assert image.status_code == 200
    assert b"".join(image.streaming_content) == tiny_png()
    assert image["Content-Type"] == "image/png"
    assert image["Content-Disposition"] == 'attachment; filename="view.png"'
    assert image["X-Content-Type-Options"] == "nosniff"
    assert image["Content-Security-Policy"] == "default-src 'none'; sandbox"
    assert b"".join(text.streaming_content) == MARKDOWN
    assert text["Content-Type"] == "text/markdown; charset=utf-8"
    assert text["Content-Disposition"] == 'attachment; filename="packing list.md"'


def test_another_owner_can_neither_list_nor_read_nor_download(api, other_api, user):
    # given an attachment of the user
    session = ChatSessionFactory(owner=user)
    body = _post(api, session, "A file.", attachment(tiny_png(), filename="a.png", content_type="image/png")).json()
    attachment_id = body["attachments"][0]["id"]

    # when another owner asks for it
    listed = other_api.get("/api/v1/attachments/")
    detail = other_api.get(f"/api/v1/attachments/{attachment_id}/")
    download = other_api.get(f"/api/v1/attachments/{attachment_id}/download/")

    # then it does not exist for them
    assert listed.json()["count"] == 0
    assert (detail.status_code, download.status_code) == (404, 404)
    assert download.json()["error"]["code"] == "not_found"


def test_captions_and_file_names_are_searchable(api, user):
    # given three attachments with English and Chinese captions
    session = ChatSessionFactory(owner=user)
    pdf = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n"
    body = _post(
        api,
        session,
        "Some files from the trip.",
        attachment(
            pdf, filename="bike-receipt.pdf", content_type="application/pdf", caption="Receipt for the new bike"
        ),
        attachment(tiny_png(), filename="IMG_001.png", content_type="image/png", caption="Beach at sunset in Porto"),
        attachment(tiny_png(), filename="IMG_002.png", content_type="image/png", caption="海边的日落很美"),
    ).json()
    receipt, beach, chinese = (a["id"] for a in body["attachments"])

    def found(query: str) -> list[str]:
        response = api.get("/api/v1/attachments/", {"q": query})
        assert response.status_code == 200
        return [a["id"] for a in response.json()["results"]]

    # then a query finds exactly the attachments whose caption or name says it (stems and CJK included)
    assert found("porto") == [beach]
    assert found("receipts") == [receipt]
    assert found("bike") == [receipt]
    assert found("日落") == [chinese]
    assert found("img_002") == [chinese]
    assert found("mountain") == []
    assert api.get("/api/v1/attachments/", {"content_type": "image/png"}).json()["count"] == 2
    assert api.get("/api/v1/attachments/").json()["count"] == 3


@pytest.mark.django_db(transaction=True)
def test_attachments_are_linked_to_the_memories_extracted_from_their_turn(settings, api, user):
    # given the offline extractor and a session whose turn shares a photo
    settings.OPENAI_API_KEY = ""
    session = ChatSessionFactory(owner=user)
    photo = attachment(tiny_png(), filename="ana.png", content_type="image/png", caption="Ana in Porto")
    shared = _post(api, session, "Remember that my sister Ana lives in Porto.", photo).json()
    _post(api, session, "Noted.", role="assistant")

    # when the session ends and memories are extracted
    assert api.post(f"/api/v1/sessions/{session.id}/end/").status_code == 202

    # then the attachment names the memories whose source is its turn, and filters by them
    memory_ids = sorted(
        str(m) for m in MemorySource.objects.filter(turn_id=shared["id"]).values_list("memory_id", flat=True)
    )
    assert memory_ids, "the extraction made no memory from the turn"
    listed = api.get("/api/v1/attachments/").json()["results"]
    assert [(a["id"], a["memory_ids"]) for a in listed] == [(shared["attachments"][0]["id"], memory_ids)]
    by_memory = api.get("/api/v1/attachments/", {"memory": memory_ids[0]}).json()["results"]
    assert [a["id"] for a in by_memory] == [shared["attachments"][0]["id"]]
