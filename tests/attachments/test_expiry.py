"""Attachments past their retention are deleted by the lifecycle, rows and files, in one set-based
step; fresh ones and those kept without a retention stay."""

from datetime import timedelta

import pytest
from django.utils import timezone

from attachments.models import Attachment
from memories.services.lifecycle import lifecycle_run
from tests.attachments.files import share_png, tiny_png
from tests.factories import ChatSessionFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def _share(api, session, name: str) -> Attachment:
    return share_png(api, session_id=session.id, name=name)


def test_the_lifecycle_deletes_expired_attachments_and_their_files(settings, api, user, attachment_dir):
    # given a retention of 30 days, one attachment shared 31 days ago and one today, and bob's old one
    settings.ATTACHMENT_RETENTION_DAYS = 30
    session = ChatSessionFactory(owner=user)
    old, fresh = _share(api, session, "old.png"), _share(api, session, "fresh.png")
    Attachment.objects.filter(pk=old.pk).update(expires_at=timezone.now() - timedelta(days=1))
    bob = UserFactory(username="bob")
    bobs = Attachment.objects.create(
        owner=bob,
        turn=ChatSessionFactory(owner=bob).turns.create(owner=bob, sequence=1, role="user", content="x"),
        filename="b.png",
        content_type="image/png",
        size=1,
        sha256="0" * 64,
        storage_name="bob/b.png",
        expires_at=timezone.now() - timedelta(days=1),
    )

    # when the user's lifecycle runs
    run = lifecycle_run(owner=user)

    # then the expired attachment and its file are gone, the fresh one and bob's stay
    assert run.counts["attachments"] == {"deleted": 1}
    assert list(Attachment.objects.order_by("filename").values_list("filename", flat=True)) == ["b.png", "fresh.png"]
    assert not (attachment_dir / old.storage_name).exists()
    assert (attachment_dir / fresh.storage_name).read_bytes() == tiny_png()
    assert Attachment.objects.filter(pk=bobs.pk).exists()
    # and the turn the attachment was shared in is kept
    assert session.turns.count() == 2

    # when it runs again, then nothing more goes
    assert lifecycle_run(owner=user).counts["attachments"] == {"deleted": 0}
    assert Attachment.objects.filter(owner=user).count() == 1


def test_the_lifecycle_clock_decides_expiry(settings, api, user, attachment_dir):
    # given a retention of 30 days and one attachment shared now
    settings.ATTACHMENT_RETENTION_DAYS = 30
    session = ChatSessionFactory(owner=user)
    shared = _share(api, session, "a.png")

    # when the lifecycle runs 29 days later, then 31 days later
    early = lifecycle_run(owner=user, now=timezone.now() + timedelta(days=29))
    late = lifecycle_run(owner=user, now=timezone.now() + timedelta(days=31))

    # then it is kept the first time and deleted the second
    assert (early.counts["attachments"], late.counts["attachments"]) == ({"deleted": 0}, {"deleted": 1})
    assert not Attachment.objects.exists()
    assert not (attachment_dir / shared.storage_name).exists()


def test_a_retention_of_zero_keeps_attachments_until_erased(settings, api, user, attachment_dir):
    settings.ATTACHMENT_RETENTION_DAYS = 0
    session = ChatSessionFactory(owner=user)
    shared = _share(api, session, "forever.png")

    run = lifecycle_run(owner=user, now=timezone.now() + timedelta(days=10_000))

    assert shared.expires_at is None
    assert run.counts["attachments"] == {"deleted": 0}
    assert (attachment_dir / shared.storage_name).exists()
