"""`manage.py import` and `manage.py export`."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memories.models import Memory
from tests.memories.services.transfer.conftest import seed_text

pytestmark = pytest.mark.django_db


def run(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_import_a_folder_then_export_and_import_for_someone_else(tmp_path, user):
    folder = tmp_path / "alfred"
    folder.mkdir()
    (folder / "MEMORY.md").write_text(seed_text("002_MEMORY.md"), encoding="utf-8")

    out, err = run("import", str(folder), "--owner", "alice")

    assert "MEMORY.md (memory-md) → MEMORY.md.migrated: 4 entries: 4 added" in out
    assert "warning: MEMORY.md:4: header says 15 entries, 4 parsed" in err
    assert (folder / "MEMORY.md.migrated").exists()

    export = tmp_path / "out"
    export.mkdir()
    run("export", "--owner", "alice", "--format", "jsonl", "--output", str(export))
    lines = (export / "memories.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4 and json.loads(lines[0])["source"] == "import"

    out, _ = run("import", str(export / "memories.jsonl"), "--owner", "dora", "--create-owner", "--json")
    assert json.loads(out)["added"] == 4
    assert Memory.objects.filter(owner__username="dora").count() == 4


def test_export_prints_to_stdout(user):
    Memory.objects.all().delete()
    out, _ = run("export", "--owner", "alice", "--format", "memory-md")
    assert out.startswith("# Agent Memory\n")


def test_clear_errors_for_a_missing_user_or_path(tmp_path, user):
    with pytest.raises(CommandError, match="no such user: nobody"):
        run("import", str(tmp_path), "--owner", "nobody")
    with pytest.raises(CommandError, match="no such file or folder"):
        run("import", str(tmp_path / "missing.md"), "--owner", "alice")
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    with pytest.raises(CommandError, match="cannot tell the format"):
        run("import", str(tmp_path / "notes.txt"), "--owner", "alice")
