"""`manage.py memory export` and `import`."""

from pathlib import Path

from django.core.management.base import CommandError

from memories.formats.memory_md import file_write_atomic
from memories.management.progress import import_progress_bar
from memories.management.tables import render_table
from memories.services.transfer import FormatError, memory_export, memory_import
from memory_project.cli import command_owner


class TransferCommands:
    """Mixed into `manage.py memory`'s Command, which gives self._owner and self.stdout."""

    # -- export / import -------------------------------------------------------------------------

    def _export(self, *, owner, fmt, output, **_):
        owner = command_owner(owner)
        if output != "-":
            target = Path(output)
            if target.is_dir():
                raise CommandError(f"--output is a directory: {output}")
            if not target.parent.exists():
                raise CommandError(f"no such directory: {target.parent}")
        text = memory_export(owner=owner, fmt=fmt)
        if output == "-":
            self.stdout.write(text, ending="" if text.endswith("\n") else "\n")
            return
        # Written beside the target and renamed, so an interrupted export never leaves half a file;
        # readable by its owner only, as it holds every memory, whatever the umask.
        file_write_atomic(target, text.encode("utf-8"), mode=0o600)
        self.stdout.write(f"Exported {owner.get_username()}'s memories as {fmt} to {target} ({len(text)} characters)")

    def _import(self, *, path, owner, fmt, mode=None, **_):
        owner = command_owner(owner)
        source = Path(path)
        if not source.exists():
            raise CommandError(f"no such file: {path}")
        try:
            with import_progress_bar(self.stderr):
                report = memory_import(owner=owner, path_or_text=source, fmt=fmt, actor=self._actor(), mode=mode)
        except FormatError as exc:
            raise CommandError(f"cannot import {path}: {exc}") from None
        self.stdout.write(f"Imported {report.source} ({report.format}) for {owner.get_username()}")
        counts = ["entries", "added", "merged", "reinforced", "superseded", "unchanged", "skipped", "digests"]
        self.stdout.write(render_table(counts, [[getattr(report, name, 0) for name in counts]]))
        if report.mode == "restore":
            self.stdout.write("restored row for row: ids, statuses, strengths and times as exported")
        for done in getattr(report, "migrated", []):
            self.stdout.write(f"migrated: {done}")
        warnings = getattr(report, "warnings", [])
        if warnings:
            self.stdout.write(f"{len(warnings)} warning(s):")
            for warning in warnings[:50]:
                where = f"{warning.file} line {warning.line}" if warning.line else warning.file
                self.stdout.write(f"  {where}: {warning.message}")
        if getattr(report, "error", ""):
            raise CommandError(f"import of {path} stopped: {report.error}")
