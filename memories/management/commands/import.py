"""`manage.py import --owner USERNAME PATH`: import a memory file or migrate a whole folder."""

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from memories.formats.memory_json import FormatError
from memories.management.progress import import_progress_bar
from memories.services.transfer import FORMATS, MODES, memory_import
from memory_project.cli import command_owner, owner_option


class Command(BaseCommand):
    help = (
        "Import MEMORY.md / learnings.md (seed 002), memory.json or logs/YYYY-MM-DD.md|json (seed 004), USER.md "
        "or a JSONL export for an owner. Given a folder, imports every such file in it and renames each to "
        "<name>.migrated (seed 004 migration), so running it again imports nothing twice."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="a file, or a folder holding MEMORY.md / memory.json / USER.md / logs/")
        owner_option(parser, required=True, help="whose memories these are")
        parser.add_argument("--format", choices=FORMATS, help="the file's format (detected when omitted)")
        parser.add_argument("--agent", default=None, help="agent namespace (default: none; JSONL keeps its own)")
        parser.add_argument(
            "--mode",
            choices=MODES,
            default=None,
            help="merge (through the merge decision) or restore (a JSONL export row for row); default: restore "
            "for a JSONL file whose every line has its id, merge otherwise. Importing again changes nothing.",
        )
        parser.add_argument("--create-owner", action="store_true", help="create the user if missing")
        parser.add_argument("--json", dest="as_json", action="store_true", help="print the full report as JSON")

    def handle(self, *args, path, owner, format, agent, mode, create_owner, as_json, **options):
        target = Path(path).expanduser()
        if not target.exists():
            raise CommandError(f"no such file or folder: {target}")
        if create_owner:
            user, _ = get_user_model().objects.get_or_create(username=owner)
        else:
            user = command_owner(owner, hint=" (pass --create-owner to create it)")
        try:
            with import_progress_bar(self.stderr):
                report = memory_import(
                    owner=user,
                    path_or_text=target,
                    fmt=format,
                    actor=f"cli:import:{user.get_username()}",
                    agent=agent,
                    mode=mode,
                )
        except FormatError as exc:
            raise CommandError(f"cannot import {target}: {exc}") from None
        if as_json:
            self.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
            return
        if report.format == "folder" and not report.files:
            self.stdout.write(f"nothing to import in {target}")
        for item in report.files or ([] if report.format == "folder" else [report]):
            status = (
                f"error: {item.error}"
                if item.error
                else (
                    f"{item.entries} entries: {item.added} added, {item.merged} merged, "
                    f"{item.reinforced} reinforced, {item.superseded} superseding, "
                    f"{item.unchanged} unchanged, {item.skipped} skipped"
                    + (" (restored row for row)" if item.mode == "restore" else "")
                    + (f", {item.digests} daily digest(s)" if item.digests else "")
                    + (", rolling summary" if item.rolling_summary else "")
                )
            )
            moved = f" → {Path(item.migrated[0]).name}" if item.migrated else ""
            self.stdout.write(f"{item.source} ({item.format}){moved}: {status}")
        for warning in report.warnings:
            where = f"{warning.file}:{warning.line}" if warning.line else warning.file
            self.stderr.write(f"warning: {where}: {warning.message}")
