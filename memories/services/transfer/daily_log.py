"""The daily-log importer: a day's lines into its DailyDigest, the noteworthy ones through the merge decision."""

import re
from datetime import datetime, time

from django.utils import timezone

from memories.extraction.heuristic import extract_candidates
from memories.formats.categories import records_failure
from memories.formats.memory_json import (
    FormatError,
    parse_daily_log_json,
    parse_daily_log_md,
)
from memories.models import (
    Category,
    DailyDigest,
)
from memories.providers.llm_types import TurnView
from memories.services.import_validation import (
    ImportInvalid,
    import_json_problems,
)
from memories.services.transfer.merge import records_merge
from memories.services.transfer.records import ImportRecord, ImportReport, category_of, entry_problems

_THIRD_PERSON_ZH = re.compile(r"^(?:该)?用户")


_THIRD_PERSON_EN = re.compile(r"^(?:the\s+)?user\s+", re.IGNORECASE)


_FIRST_PERSON_VERBS = {
    "is": "am",
    "has": "have",
    "does": "do",
    "prefers": "prefer",
    "likes": "like",
    "loves": "love",
    "hates": "hate",
    "dislikes": "dislike",
    "wants": "want",
    "uses": "use",
    "works": "work",
    "lives": "live",
    "needs": "need",
    "always": "always",
    "usually": "usually",
    "never": "never",
}


def _first_person(text: str) -> str:
    """A log's third-person note ("用户喜欢…", "The user prefers …") as the user would say it, for the
    offline extractor, which only reads what users say about themselves."""
    if _THIRD_PERSON_ZH.match(text):
        return _THIRD_PERSON_ZH.sub("我", text, count=1)
    match = _THIRD_PERSON_EN.match(text)
    if match:
        rest = text[match.end() :]
        verb, _, tail = rest.partition(" ")
        return f"I {_FIRST_PERSON_VERBS.get(verb.lower(), verb)} {tail}".strip()
    return text


def _noteworthy(entry, observed: datetime, report: ImportReport) -> list[ImportRecord]:
    """The memories a log line holds: tagged ones as tagged, statements the extractor recognises."""
    importance = entry.extra.get("salience", entry.extra.get("importance"))
    if isinstance(importance, bool) or not isinstance(importance, int | float) or not 0 <= importance <= 1:
        importance = None
    origin = f"line {entry.line}" + (f" at {entry.time}" if entry.time else "")
    if entry.category or entry.type == "reflection":
        if entry.category:
            category = category_of(report, entry.line, entry.category, content=entry.content, context=entry.extra)
        else:
            category = Category.ERROR if records_failure(entry.content, entry.extra) else Category.SKILL
        return [
            ImportRecord(
                line=entry.line,
                content=entry.content,
                category=category,
                importance=importance,
                observed_at=observed,
                origin=origin,
            )
        ]
    turn = TurnView(sequence=1, role="user", speaker="", content=_first_person(entry.content), created_at=observed)
    return [
        ImportRecord(
            line=entry.line,
            content=candidate.content,
            category=candidate.category,
            importance=candidate.importance,
            subject=candidate.subject,
            predicate=candidate.predicate,
            structured_data={"value": candidate.value} if candidate.value else None,
            observed_at=observed,
            origin=origin,
        )
        for candidate in extract_candidates([turn])
        if candidate.action == "remember"
    ]


def import_daily_log(*, owner, text, name, actor, agent, report: ImportReport) -> None:
    is_json = name.lower().endswith(".json") or text.lstrip("\ufeff").lstrip().startswith("{")
    log = parse_daily_log_json(text, name=name) if is_json else parse_daily_log_md(text, name=name)
    if log.day is None:
        raise FormatError(
            "a daily log needs its day: name the file YYYY-MM-DD.md / .json, or put the date in its first heading"
        )
    problems = entry_problems(log.warnings, report)
    namespace = agent or ""
    imported_from = f"import:{name or 'daily-log'}"
    rows = []
    records: list[ImportRecord] = []
    tz = timezone.get_current_timezone()
    for entry in log.entries:
        clock = time.fromisoformat(entry.time) if entry.time else time.min
        observed = timezone.make_aware(datetime.combine(log.day, clock), tz)
        row = {"time": entry.time, "type": f"log.{entry.type}", "content": entry.content, "source": imported_from}
        if entry.category:
            row["category"] = entry.category
        row.update({k: v for k, v in entry.extra.items() if k not in row})
        rows.append(row)
        records += _noteworthy(entry, observed, report)
    for row, entry in zip(rows, log.entries):
        problems += import_json_problems(line=entry.line, name="entry", value=row)
    if problems:
        raise ImportInvalid(problems)
    digest, created = DailyDigest.objects.select_for_update().get_or_create(owner=owner, agent=namespace, day=log.day)
    if digest.entries_purged_at is not None:
        report.warn(None, f"the digest of {log.day} was purged already; its lines were not added back")
    else:
        known = {(e.get("time"), e.get("type"), e.get("content")) for e in digest.entries or []}
        new_rows = [r for r in rows if (r["time"], r["type"], r["content"]) not in known]
        if new_rows or created:
            digest.entries = list(digest.entries or []) + sorted(new_rows, key=lambda r: r["time"])
            if log.summary and not digest.summary:
                # A summary written by the old system counts as done: the lifecycle will not redo it.
                digest.summary = log.summary
                digest.summarized_at = timezone.now()
            digest.save()
            report.digests += 1
    # Log lines are counted as entries; the memories they yield are what records_merge counts.
    entries_before = report.entries
    records_merge(owner=owner, records=records, report=report, fmt="daily-log", actor=actor, agent=namespace)
    report.entries = entries_before + len(log.entries)
