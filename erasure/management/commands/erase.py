"""`manage.py erase --owner U [--agent A] [--delete-account] [--yes]`: erase an owner's data with a receipt.

`--receipts --owner U` lists the receipts kept for an owner; `--verify RECEIPT_ID` checks one's digest.
"""

import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from erasure.models import ErasureReceipt
from erasure.services import owner_erase, receipt_verify
from memory_project.cli import confirm, owner_option


def receipt_json(receipt: ErasureReceipt, **extra) -> str:
    body = {
        "id": str(receipt.id),
        "owner_id": receipt.owner_id,
        "agent": receipt.agent,
        "account_deleted": receipt.account_deleted,
        "requested_by": receipt.requested_by,
        "erased_at": receipt.erased_at.isoformat(),
        "counts": dict(sorted(receipt.counts.items())),
        "total": receipt.total,
        "digest": receipt.digest,
        "verified": receipt_verify(receipt),
        **extra,
    }
    return json.dumps(body, indent=2)


class Command(BaseCommand):
    help = "Erase every row, file and cached entry of an owner (or of one agent of theirs), with a receipt."

    def add_arguments(self, parser):
        owner_option(parser)
        parser.add_argument("--agent", help="erase only this agent namespace ('' for the default one)")
        parser.add_argument("--delete-account", action="store_true", help="delete the account and its API keys too")
        parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")
        parser.add_argument("--receipts", action="store_true", help="list the owner's receipts instead")
        parser.add_argument("--verify", metavar="RECEIPT_ID", help="check a receipt's digest")

    def handle(self, *args, owner, agent, delete_account, yes, receipts, verify, **options):
        if verify:
            receipt = ErasureReceipt.objects.filter(pk=verify).first() if _is_uuid(verify) else None
            if receipt is None:
                raise CommandError(f"no receipt {verify}")
            self.stdout.write(receipt_json(receipt))
            if not receipt_verify(receipt):
                raise CommandError("the receipt's digest does not match its figures")
            return
        if not owner:
            raise CommandError("--owner is required")
        user = get_user_model().objects.filter(username=owner).first()
        if receipts:
            owner_id = user.pk if user else None
            for receipt in ErasureReceipt.objects.filter(owner_id=owner_id):
                scope = "all agents" if receipt.agent is None else f"agent {receipt.agent!r}"
                when = f"{receipt.erased_at:%Y-%m-%d %H:%M:%S}"
                self.stdout.write(f"{when}  {receipt.id}  {scope}  total={receipt.total}")
            return
        if user is None:
            raise CommandError(f"no such user: {owner}")
        scope = f"the agent {agent!r} of {owner}" if agent is not None else f"every agent of {owner}"
        confirm(self, f"Erase all data of {scope}{' and the account' if delete_account else ''}?", yes=yes)
        receipt, created = owner_erase(owner_id=user.pk, requested_by="cli", agent=agent, delete_account=delete_account)
        if not created:
            self.stderr.write(f"Nothing left to erase for {scope}; the previous receipt:")
        self.stdout.write(receipt_json(receipt, noop=not created))


def _is_uuid(value: str) -> bool:
    import uuid

    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True
