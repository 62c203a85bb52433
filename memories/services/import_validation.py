"""Every imported entry passes the REST API's validators before anything is written (issue 12).

An import used to write what its parser produced, so values the API refuses (content over
MAX_CONTENT_CHARS, an agent over 100 characters, NUL bytes or lone surrogates, timestamps that fall
outside years 1–9999 once in UTC) reached the database and failed there with a 500, after earlier
entries had been written in the same request. Here each entry is checked with the API's own field
classes first; any problem refuses the whole file with its line numbers (`ImportInvalid`, a 400),
and nothing is written.

`import_progress` is how a running import reports how far it got (a background job's progress bar,
the CLI's): the writer calls `import_progress_tick` after each entry.
"""

import contextvars
from collections.abc import Callable
from dataclasses import asdict, dataclass

from django.conf import settings
from rest_framework import serializers

from memories.formats.memory_json import FormatError
from memories.models import Category, Retention, Status
from memory_project.api.fields import (
    CleanCharField,
    ContentField,
    SafeDateTimeField,
    StrictJSONObjectField,
    json_problem,
)

# How many problems one refusal lists (a broken file can have thousands).
MAX_PROBLEMS = 100


@dataclass
class ImportProblem:
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else "entry"
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


class ImportInvalid(FormatError):
    """Entries the API would refuse; nothing of the file was imported."""

    def __init__(self, problems: list[ImportProblem]):
        self.problems = problems[:MAX_PROBLEMS]
        self.total = len(problems)
        shown = "; ".join(str(p) for p in self.problems[:5])
        more = f" (and {self.total - 5} more)" if self.total > 5 else ""
        super().__init__(f"{self.total} entr{'y' if self.total == 1 else 'ies'} cannot be imported: {shown}{more}")

    def details(self) -> dict:
        return {"entries": [asdict(p) for p in self.problems], "count": self.total}


class _Unit(serializers.FloatField):
    def __init__(self, **kwargs):
        super().__init__(min_value=0, max_value=1, allow_null=True, required=False, **kwargs)


class ImportEntrySerializer(serializers.Serializer):
    """What the API accepts for a memory (memories.api.serializers), plus the fields only an import sets."""

    content = ContentField()
    category = serializers.ChoiceField(choices=Category.choices)
    status = serializers.ChoiceField(choices=Status.choices)
    retention = serializers.ChoiceField(choices=Retention.choices)
    agent = CleanCharField(max_length=100, allow_blank=True, required=False)
    subject = CleanCharField(max_length=200, allow_blank=True, required=False)
    predicate = CleanCharField(max_length=200, allow_blank=True, required=False)
    structured_data = StrictJSONObjectField(required=False, allow_null=True)
    importance = _Unit()
    confidence = _Unit()
    strength = _Unit()
    observed_at = SafeDateTimeField(required=False, allow_null=True)
    created_at = SafeDateTimeField(required=False, allow_null=True)
    expires_at = SafeDateTimeField(required=False, allow_null=True)
    last_reinforced_at = SafeDateTimeField(required=False, allow_null=True)
    last_accessed_at = SafeDateTimeField(required=False, allow_null=True)
    updated_at = SafeDateTimeField(required=False, allow_null=True)
    origin = CleanCharField(allow_blank=True, required=False, trim_whitespace=False)
    hit_count = serializers.IntegerField(min_value=0, max_value=2**31 - 1, required=False)
    access_count = serializers.IntegerField(min_value=0, max_value=2**31 - 1, required=False)


def _flatten(errors, prefix: str = "") -> list[tuple[str, str]]:
    out = []
    if isinstance(errors, dict):
        for key, value in errors.items():
            out += _flatten(value, key if key != "non_field_errors" else prefix)
    elif isinstance(errors, list):
        for value in errors:
            out += _flatten(value, prefix)
    else:
        out.append((prefix, str(errors)))
    return out


def import_entry_problems(*, line: int | None, values: dict) -> list[ImportProblem]:
    """The API's verdict on one entry's values (None values are left out: absent means default)."""
    data = {k: v for k, v in values.items() if v is not None or k == "structured_data"}
    serializer = ImportEntrySerializer(data=data)
    if serializer.is_valid():
        return []
    return [ImportProblem(line, field, message) for field, message in _flatten(serializer.errors)]


def import_text_problems(*, name: str, value, line: int | None = None) -> list[ImportProblem]:
    """A free text a file carries besides its entries (memory.json's rolling summary)."""
    if value is None or value == "":
        return []
    field = CleanCharField(max_length=settings.MAX_CONTENT_CHARS * 4, trim_whitespace=False)
    try:
        field.run_validation(value)
    except serializers.ValidationError as exc:
        return [ImportProblem(line, name, message) for _, message in _flatten(exc.detail)]
    return []


import_progress: contextvars.ContextVar[Callable[[int, int], None] | None] = contextvars.ContextVar(
    "import_progress", default=None
)


def import_progress_tick(*, done: int, total: int) -> None:
    callback = import_progress.get()
    if callback is not None:
        callback(done, total)


_PRESERVED = (
    "strength",
    "created_at",
    "expires_at",
    "last_reinforced_at",
    "last_accessed_at",
    "hit_count",
    "access_count",
)


def import_record_problems(*, record, agent: str) -> list[ImportProblem]:
    """The API's verdict on one parsed record (transfer.records.ImportRecord) as it would be written."""
    importance = record.importance if not isinstance(record.importance, str) else None
    values = {
        "content": record.content,
        "category": record.category,
        "status": record.status,
        "retention": record.retention,
        "agent": agent,
        "subject": record.subject,
        "predicate": record.predicate,
        "structured_data": record.structured_data,
        "importance": importance,
        "confidence": record.confidence,
        "observed_at": record.observed_at,
        "origin": record.origin,
        # A restore writes the exported time as given.
        "updated_at": record.updated_at,
        **{key: record.preserve[key] for key in _PRESERVED if key in record.preserve},
    }
    return import_entry_problems(line=record.line, values=values)


def import_json_problems(*, line: int | None, name: str, value) -> list[ImportProblem]:
    """JSON a file carries as it is (a daily log's lines go into the day's digest)."""
    problem = json_problem(value)
    return [ImportProblem(line, name, problem)] if problem else []
