"""`manage.py export --owner USERNAME --format FORMAT [--output FILE]`: write an owner's memories out."""

from pathlib import Path

from django.core.management.base import BaseCommand

from memories.formats.memory_md import file_write_with_backup
from memories.services.transfer import EXPORT_FILE_NAMES, EXPORT_FORMATS, memory_export
from memory_project.cli import command_owner, owner_option


class Command(BaseCommand):
    help = (
        "Export everything of an owner as MEMORY.md / learnings.md (seed 002), memory.json (seed 004), USER.md "
        "or JSONL (ours, full fidelity: `manage.py import` reads it back). Prints to stdout unless --output."
    )

    def add_arguments(self, parser):
        owner_option(parser, required=True)
        parser.add_argument("--format", choices=EXPORT_FORMATS, default="jsonl")
        parser.add_argument("--agent", default=None, help="one agent namespace (default: all)")
        names = ", ".join(EXPORT_FILE_NAMES.values())
        parser.add_argument("--output", metavar="PATH", help=f"a file, or a folder to write {names} into")

    def handle(self, *args, owner, format, agent, output, **options):
        text = memory_export(owner=command_owner(owner), fmt=format, agent=agent)
        if not output:
            self.stdout.write(text, ending="")
            return
        path = Path(output).expanduser()
        if path.is_dir():
            path = path / EXPORT_FILE_NAMES[format]
        backup = file_write_with_backup(path, text)
        self.stderr.write(f"wrote {path}" + (f" (previous file kept as {backup.name})" if backup else ""))
