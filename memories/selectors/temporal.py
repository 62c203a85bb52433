"""Temporal awareness for retrieval: the time a question points at, and whether a text talks time."""

import re
from datetime import UTC, datetime, timedelta

_MONTHS = {
    name: index + 1
    for index, name in enumerate(
        "january february march april may june july august september october november december".split()
    )
}
_MON = "(" + "|".join(_MONTHS) + ")"
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MON},?\s+(\d{{4}})\b")
_MONTH_DAY_YEAR = re.compile(rf"\b{_MON}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_YEAR = re.compile(rf"\b{_MON},?\s+(\d{{4}})\b")
_YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")
_CJK_DATE = re.compile(r"(\d{4})年(\d{1,2})月(?:(\d{1,2})[日号])?")
_RELATIVE = {
    "yesterday": (1, 1),
    "last week": (14, 0),
    "last weekend": (9, 0),
    "last month": (62, 0),
    "last year": (730, 0),
    "昨天": (1, 1),
    "上周": (14, 0),
    "上个月": (62, 0),
    "去年": (730, 0),
}
_WHEN_QUESTION = re.compile(
    r"^\W*(when|how long|since when|what (year|month|date|day|time)|which (year|month|day))\b"
    r"|什么时候|哪一?年|哪天|多久",
    re.IGNORECASE,
)
_TIME_WORDS = (
    r"\b(yesterday|today|tonight|tomorrow|ago|recently|last (week|month|year|weekend|night|summer|winter|spring|fall)|"
    r"next (week|month|year)|this (week|month|year|weekend)|weekend|(19|20)\d\d|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|" + _MON[1:-1] + r")\b"
    r"|昨天|今天|明天|上周|下周|上个月|去年|前天|周末|\d+年|\d+月"
)
# Tried on every candidate of a "when" question (a few hundred a search). The lookahead names every
# character a match of _TIME_WORDS can start with: the regex engine then skips to those instead of
# trying each alternative at every position, which halved the time per text (the leading \b hid
# that from it). A word added above must have its first character here
# (tests/memories/selectors/test_temporal.py compares the two patterns on every word).
_TIME_EXPRESSION = re.compile(r"(?=[ytarlnwmfsjdo\d昨今明上下去前周])(?:" + _TIME_WORDS + ")", re.IGNORECASE)


def _utc(year: int, month: int, day: int = 1) -> datetime | None:
    try:
        return datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None


def query_time_window(query: str, *, now: datetime) -> tuple[datetime, datetime] | None:
    """The span of time a question refers to, if it names one.

    A named day opens the window a week before it: people report things that happened "last
    week" in the conversation dated that day. A month or a year is taken whole, with a margin.
    """
    text = query.lower()
    for pattern, order in ((_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy")):
        m = pattern.search(text)
        if m:
            if order == "dmy":
                day, month, year = int(m.group(1)), _MONTHS[m.group(2)], int(m.group(3))
            else:
                month, day, year = _MONTHS[m.group(1)], int(m.group(2)), int(m.group(3))
            when = _utc(year, month, day)
            if when:
                return when - timedelta(days=8), when + timedelta(days=2)
    m = _ISO_DATE.search(text)
    if m and (when := _utc(int(m.group(1)), int(m.group(2)), int(m.group(3)))):
        return when - timedelta(days=8), when + timedelta(days=2)
    m = _CJK_DATE.search(query)
    if m:
        year, month = int(m.group(1)), int(m.group(2))
        if m.group(3) and (when := _utc(year, month, int(m.group(3)))):
            return when - timedelta(days=8), when + timedelta(days=2)
        if start := _utc(year, month):
            return start - timedelta(days=3), (start + timedelta(days=32)).replace(day=1) + timedelta(days=3)
    m = _MONTH_YEAR.search(text)
    if m and (start := _utc(int(m.group(2)), _MONTHS[m.group(1)])):
        return start - timedelta(days=3), (start + timedelta(days=32)).replace(day=1) + timedelta(days=3)
    m = _YEAR.search(text)
    if m:
        year = int(m.group(1))
        return _utc(year, 1, 1), _utc(year + 1, 1, 1)
    for phrase, (back, forward) in _RELATIVE.items():
        if phrase in text:
            return now - timedelta(days=back), now + timedelta(days=forward)
    return None


def is_when_question(query: str) -> bool:
    return bool(_WHEN_QUESTION.search(query))


def mentions_time(text: str) -> bool:
    return bool(_TIME_EXPRESSION.search(text))
