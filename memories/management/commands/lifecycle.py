"""`manage.py lifecycle --owner USERNAME | --all [--export-dir PATH]`: run the lifecycle now."""

from django.core.management.base import BaseCommand, CommandError

from memories.services.lifecycle import lifecycle_owners, lifecycle_run
from memory_project.cli import command_owner, owner_option


class Command(BaseCommand):
    help = "Run the memory lifecycle (dedup, decay, archive/forget, expiry, compression, digests, exports, cap)."

    def add_arguments(self, parser):
        target = parser.add_mutually_exclusive_group(required=True)
        owner_option(target, help="run for this user only")
        target.add_argument("--all", action="store_true", help="run for every owner with memories or sessions")
        parser.add_argument("--export-dir", metavar="PATH", help="also write MEMORY.md, USER.md, learnings.md here")

    def handle(self, *args, **options):
        owners = [command_owner(options["owner"])] if options["owner"] else list(lifecycle_owners())
        failed = 0
        for owner in owners:
            run = lifecycle_run(owner=owner, trigger="command", export_dir=options["export_dir"])
            failed += run.status != "completed"
            self.stdout.write(f"{owner.get_username()}: run {run.pk} {run.status} in {run.duration_ms} ms")
            for step in run.steps:
                counts = " ".join(f"{k}={v}" for k, v in step.get("counts", {}).items())
                line = f"  {step['name']:<11} {step['status']:<7} {step.get('duration_ms', 0):>7} ms  {counts}"
                self.stdout.write(line.rstrip())
            if run.error:
                self.stdout.write(f"  error: {run.error}")
        if not owners:
            self.stdout.write("no owners to run")
        if failed:
            raise CommandError(f"{failed} run(s) did not complete")
