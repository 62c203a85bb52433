"""Past references ("last Saturday", "上周六", "three years ago") resolved against the turn's time, for facts
that happened; the conventions are in memories.extraction.dates."""

import re
from datetime import date, datetime, timedelta

from memories.extraction.dates import (
    NUMBER_WORDS,
    WEEKDAY_NAMES,
    WEEKDAYS,
    ZH_NUM,
    ZH_WEEKDAYS,
    DateMatch,
    Resolver,
    add_months,
    day_of,
    earliest,
    numeral_value,
)


def _last_week(today: date, weekday: int) -> date:
    return today - timedelta(days=today.weekday() + 7) + timedelta(days=weekday)


def _months_before(today: date, months: int) -> date:
    return add_months(today, -months)


_PAST_NUMBER = rf"{NUMBER_WORDS}|a couple of|a few|{ZH_NUM}"


_PAST_PATTERNS: list[tuple[re.Pattern, Resolver, str]] = [
    (re.compile(r"\b(?:the )?day before yesterday\b", re.I), lambda m, t: t - timedelta(days=2), "day"),
    (re.compile(r"\byesterday\b", re.I), lambda m, t: t - timedelta(days=1), "day"),
    (re.compile(r"\b(?:earlier )?(?:today|this morning|this afternoon|tonight)\b", re.I), lambda m, t: t, "day"),
    (
        re.compile(rf"\blast ({WEEKDAY_NAMES})\b", re.I),
        lambda m, t: _last_week(t, WEEKDAYS[m[1].lower()]),
        "day",
    ),
    (re.compile(r"\blast weekend\b", re.I), lambda m, t: _last_week(t, 5), "day"),
    (re.compile(r"\blast week\b", re.I), lambda m, t: _last_week(t, 0), "day"),
    (re.compile(r"\blast month\b", re.I), lambda m, t: _months_before(t, 1), "month"),
    (re.compile(r"\blast year\b", re.I), lambda m, t: date(t.year - 1, 1, 1), "year"),
    (
        re.compile(rf"\b({NUMBER_WORDS}|a couple of|a few) days? ago\b", re.I),
        lambda m, t: t - timedelta(days=_count(m[1])),
        "day",
    ),
    (
        re.compile(rf"\b({NUMBER_WORDS}|a couple of|a few) weeks? ago\b", re.I),
        lambda m, t: t - timedelta(days=7 * _count(m[1])),
        "day",
    ),
    (
        re.compile(rf"\b({NUMBER_WORDS}|a couple of|a few) months? ago\b", re.I),
        lambda m, t: _months_before(t, _count(m[1])),
        "month",
    ),
    (
        re.compile(rf"\b({NUMBER_WORDS}|a couple of|a few) years? ago\b", re.I),
        lambda m, t: date(t.year - _count(m[1]), 1, 1),
        "year",
    ),
    (re.compile(r"大前天"), lambda m, t: t - timedelta(days=3), "day"),
    (re.compile(r"前天"), lambda m, t: t - timedelta(days=2), "day"),
    (re.compile(r"昨天|昨晚|昨日|昨儿"), lambda m, t: t - timedelta(days=1), "day"),
    (re.compile(r"今天|今早|今晚|今天早上|今天上午"), lambda m, t: t, "day"),
    (
        re.compile(r"上(?:个)?(?:周|星期|礼拜)([一二三四五六日天])"),
        lambda m, t: _last_week(t, ZH_WEEKDAYS[m[1]]),
        "day",
    ),
    (re.compile(r"上(?:个)?周末"), lambda m, t: _last_week(t, 5), "day"),
    (re.compile(r"上(?:个)?(?:周|星期|礼拜)"), lambda m, t: _last_week(t, 0), "day"),
    (re.compile(r"上(?:个)?月"), lambda m, t: _months_before(t, 1), "month"),
    (re.compile(r"去年"), lambda m, t: date(t.year - 1, 1, 1), "year"),
    (re.compile(r"前年"), lambda m, t: date(t.year - 2, 1, 1), "year"),
    (re.compile(rf"({ZH_NUM})天(?:前|之前|以前)"), lambda m, t: t - timedelta(days=numeral_value(m[1])), "day"),
    (
        re.compile(rf"({ZH_NUM})(?:个)?(?:周|星期|礼拜)(?:前|之前|以前)"),
        lambda m, t: t - timedelta(days=7 * numeral_value(m[1])),
        "day",
    ),
    (re.compile(rf"({ZH_NUM})个月(?:前|之前|以前)"), lambda m, t: _months_before(t, numeral_value(m[1])), "month"),
    (re.compile(rf"({ZH_NUM})年(?:前|之前|以前)"), lambda m, t: date(t.year - numeral_value(m[1]), 1, 1), "year"),
]


def _count(token: str) -> int:
    token = token.lower()
    return {"a couple of": 2, "a few": 3}.get(token) or numeral_value(token)


def find_past_date(text: str, now: datetime | date) -> DateMatch | None:
    """The earliest (then longest) reference to a past day, month or year in `text`."""
    return earliest(past_matches(text, now))


def past_matches(text: str, now: datetime | date) -> list[DateMatch]:
    today = day_of(now)
    found = []
    for pattern, resolve, precision in _PAST_PATTERNS:
        for m in pattern.finditer(text):
            try:
                when = resolve(m, today)
            except (ValueError, KeyError):
                continue
            found.append(DateMatch(m.start(), m.end(), m.group(0), when, precision))
    return found
