"""Relative and absolute date expressions in English and Chinese, resolved against the turn's time.

Conventions (a memory outlives the conversation, so "Friday" has to become a date):
- a bare weekday ("Friday", "on Friday", "周五") is its next occurrence, never today;
- "next Friday" / "下周五" is the Friday of next week (weeks start on Monday);
- "this Friday" / "这周五" is the Friday of this week (next week's once it has passed);
- "next week" / "下周" is due at the end (Sunday) of next week, "this week" at the end of this one;
- "next month" / "下个月" at the last day of next month, "end of the month" / "月底" this month's;
- a month and day without a year is this year's, or next year's once it has passed;
- past references ("last Friday", "上周五", "yesterday") are not due dates and are ignored;
- recurring ones ("every Monday", "每周一") are habits, not due dates, and are ignored.

`past_dates.find_past_date` reads the past ones for facts that happened ("adopted a dog last Saturday"):
- "last Saturday" / "上周六" is the Saturday of last week (weeks start on Monday), "on Saturday"
  in a past-tense statement is not read (it may be either);
- "yesterday" / "昨天", "the day before yesterday" / "前天";
- "N days / weeks / months / years ago" / "N天前", "两周前", "三个月前", "两年前";
- "last week" / "上周" is the Monday of last week, "last month" / "上个月" and "last year" /
  "去年" are a month ("2023-04") and a year ("2022"): the date is as precise as what was said.

`date_notes.annotate_dates` writes every date it reads (due or past) after its expression, "last Saturday
(2023-05-06)" / "上周六（2023-05-06）", so the memory still says when once the conversation's
time is gone, and a temporal question finds it by its date.
"""

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

WEEKDAYS = {
    "monday": 0,
    "tuesday": 1,
    "wednesday": 2,
    "thursday": 3,
    "friday": 4,
    "saturday": 5,
    "sunday": 6,
}


ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}


_MONTHS = {
    "jan": 1,
    "january": 1,
    "feb": 2,
    "february": 2,
    "mar": 3,
    "march": 3,
    "apr": 4,
    "april": 4,
    "may": 5,
    "jun": 6,
    "june": 6,
    "jul": 7,
    "july": 7,
    "aug": 8,
    "august": 8,
    "sep": 9,
    "sept": 9,
    "september": 9,
    "oct": 10,
    "october": 10,
    "nov": 11,
    "november": 11,
    "dec": 12,
    "december": 12,
}


_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "一": 1,
    "两": 2,
    "二": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
    "十": 10,
}


@dataclass(frozen=True)
class DateMatch:
    start: int
    end: int
    text: str
    due: date
    precision: str = "day"  # "day", "month" or "year": how much of `due` was said

    @property
    def is_absolute(self) -> bool:
        return bool(re.fullmatch(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{4}年\d{1,2}月\d{1,2}[日号]?", self.text))

    @property
    def iso(self) -> str:
        return {"day": self.due.isoformat(), "month": self.due.isoformat()[:7], "year": str(self.due.year)}[
            self.precision
        ]


def _zh_numeral(token: str) -> int:
    """一 … 三十一 (the numbers of months and days)."""
    digits = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
    if "十" not in token:
        return digits[token]
    tens, _, ones = token.partition("十")
    return (digits[tens] if tens else 1) * 10 + (digits[ones] if ones else 0)


def numeral_value(token: str) -> int:
    return int(token) if token.isdigit() else _NUMBERS[token.lower()]


def _end_of_week(today: date, weeks_ahead: int = 0) -> date:
    return today + timedelta(days=6 - today.weekday() + 7 * weeks_ahead)


def _end_of_month(year: int, month: int) -> date:
    while month > 12:
        year, month = year + 1, month - 12
    return date(year, month, calendar.monthrange(year, month)[1])


def add_months(today: date, months: int) -> date:
    month = today.month - 1 + months
    year = today.year + month // 12
    month = month % 12 + 1
    return date(year, month, min(today.day, calendar.monthrange(year, month)[1]))


def _upcoming(today: date, weekday: int) -> date:
    return today + timedelta(days=(weekday - today.weekday()) % 7 or 7)


def _this_week(today: date, weekday: int) -> date:
    day = today - timedelta(days=today.weekday()) + timedelta(days=weekday)
    return day if day >= today else day + timedelta(days=7)


def _next_week(today: date, weekday: int) -> date:
    return today - timedelta(days=today.weekday()) + timedelta(days=7 + weekday)


def _month_day(today: date, month: int, day: int, year: int | None) -> date:
    resolved = date(year or today.year, month, day)
    if year is None and resolved < today:
        resolved = date(today.year + 1, month, day)
    return resolved


Resolver = Callable[[re.Match, date], date]


_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))


WEEKDAY_NAMES = "|".join(WEEKDAYS)


NUMBER_WORDS = r"\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten"


ZH_NUM = r"\d+|[一两二三四五六七八九十]"


_PATTERNS: list[tuple[re.Pattern, Resolver]] = [
    (
        re.compile(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})"),
        lambda m, t: date(int(m[1]), int(m[2]), int(m[3])),
    ),
    (
        re.compile(r"(\d{4})年(\d{1,2})月(\d{1,2})[日号]?"),
        lambda m, t: date(int(m[1]), int(m[2]), int(m[3])),
    ),
    (
        re.compile(r"(?<![\d年])(\d{1,2})月(\d{1,2})[日号]"),
        lambda m, t: _month_day(t, int(m[1]), int(m[2]), None),
    ),
    (
        re.compile(
            r"(?<![\d年一二三四五六七八九十])([一二三四五六七八九十]{1,2})月([一二三四五六七八九十]{1,3})[日号]"
        ),
        lambda m, t: _month_day(t, _zh_numeral(m[1]), _zh_numeral(m[2]), None),
    ),
    (
        re.compile(rf"\b({_MONTH_NAMES})\.? (\d{{1,2}})(?:st|nd|rd|th)?\b(?:,? (\d{{4}})\b)?", re.I),
        lambda m, t: _month_day(t, _MONTHS[m[1].lower()], int(m[2]), int(m[3]) if m[3] else None),
    ),
    (
        re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?({_MONTH_NAMES})\b(?:,? (\d{{4}})\b)?", re.I),
        lambda m, t: _month_day(t, _MONTHS[m[2].lower()], int(m[1]), int(m[3]) if m[3] else None),
    ),
    (re.compile(r"\b(?:the )?day after tomorrow\b", re.I), lambda m, t: t + timedelta(days=2)),
    (re.compile(r"\btomorrow\b", re.I), lambda m, t: t + timedelta(days=1)),
    (re.compile(r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b", re.I), lambda m, t: t),
    (
        re.compile(rf"\bnext ({WEEKDAY_NAMES})\b", re.I),
        lambda m, t: _next_week(t, WEEKDAYS[m[1].lower()]),
    ),
    (
        re.compile(rf"\bthis ({WEEKDAY_NAMES})\b", re.I),
        lambda m, t: _this_week(t, WEEKDAYS[m[1].lower()]),
    ),
    (re.compile(rf"\b({WEEKDAY_NAMES})\b", re.I), lambda m, t: _upcoming(t, WEEKDAYS[m[1].lower()])),
    (re.compile(r"\bnext weekend\b", re.I), lambda m, t: _end_of_week(t, 1)),
    (re.compile(r"\b(?:this|the) weekend\b", re.I), lambda m, t: _end_of_week(t)),
    (re.compile(r"\bnext week\b", re.I), lambda m, t: _end_of_week(t, 1)),
    (
        re.compile(r"\b(?:this week|(?:the )?end of (?:the|this) week)\b", re.I),
        lambda m, t: _end_of_week(t),
    ),
    (re.compile(r"\bnext month\b", re.I), lambda m, t: _end_of_month(t.year, t.month + 1)),
    (
        re.compile(r"\b(?:this month|(?:the )?end of (?:the|this) month)\b", re.I),
        lambda m, t: _end_of_month(t.year, t.month),
    ),
    (re.compile(r"\bnext year\b", re.I), lambda m, t: date(t.year + 1, 12, 31)),
    (
        re.compile(rf"\b(?:in|within) ({NUMBER_WORDS}) days?\b", re.I),
        lambda m, t: t + timedelta(days=numeral_value(m[1])),
    ),
    (
        re.compile(rf"\b(?:in|within) ({NUMBER_WORDS}) weeks?\b", re.I),
        lambda m, t: t + timedelta(days=7 * numeral_value(m[1])),
    ),
    (
        re.compile(rf"\b(?:in|within) ({NUMBER_WORDS}) months?\b", re.I),
        lambda m, t: add_months(t, numeral_value(m[1])),
    ),
    (re.compile(r"大后天"), lambda m, t: t + timedelta(days=3)),
    (re.compile(r"后天"), lambda m, t: t + timedelta(days=2)),
    (re.compile(r"明天|明早|明晚|明日"), lambda m, t: t + timedelta(days=1)),
    (re.compile(r"今天|今晚|今早|今日"), lambda m, t: t),
    (
        re.compile(r"下(?:个)?(?:周|星期|礼拜)([一二三四五六日天])"),
        lambda m, t: _next_week(t, ZH_WEEKDAYS[m[1]]),
    ),
    (
        re.compile(r"(?:这|本)(?:个)?(?:周|星期|礼拜)([一二三四五六日天])"),
        lambda m, t: _this_week(t, ZH_WEEKDAYS[m[1]]),
    ),
    (re.compile(r"(?:周|星期|礼拜)([一二三四五六日天])"), lambda m, t: _upcoming(t, ZH_WEEKDAYS[m[1]])),
    (re.compile(r"下(?:个)?(?:周末)"), lambda m, t: _end_of_week(t, 1)),
    (re.compile(r"(?:这|本)?(?:个)?周末"), lambda m, t: _end_of_week(t)),
    (re.compile(r"下(?:个)?(?:周|星期|礼拜)"), lambda m, t: _end_of_week(t, 1)),
    (re.compile(r"(?:这|本)(?:个)?(?:周|星期|礼拜)|周内"), lambda m, t: _end_of_week(t)),
    (re.compile(r"下(?:个)?月"), lambda m, t: _end_of_month(t.year, t.month + 1)),
    (re.compile(r"月底|本月|这个月"), lambda m, t: _end_of_month(t.year, t.month)),
    (re.compile(r"明年"), lambda m, t: date(t.year + 1, 12, 31)),
    (re.compile(rf"({ZH_NUM})天(?:后|之后|以后|内|之内)"), lambda m, t: t + timedelta(days=numeral_value(m[1]))),
    (
        re.compile(rf"({ZH_NUM})(?:个)?(?:周|星期|礼拜)(?:后|之后|以后|内|之内)"),
        lambda m, t: t + timedelta(days=7 * numeral_value(m[1])),
    ),
    (re.compile(rf"({ZH_NUM})个月(?:后|之后|以后|内|之内)"), lambda m, t: add_months(t, numeral_value(m[1]))),
]


# A reference to the past or a recurrence right before the match disqualifies it.
_PAST_OR_RECURRING = re.compile(r"(?:\blast|\bevery|\beach|\bprevious|上|每|昨|前)\s*(?:个)?\s*$", re.I)


def position(match: DateMatch) -> tuple[int, int]:
    """Where an expression stands: earlier first, then longer first at the same start."""
    return match.start, -(match.end - match.start)


def earliest(found: list[DateMatch]) -> DateMatch | None:
    """The earliest of the expressions found, the longest of those starting there."""
    return min(found, key=position) if found else None


def day_of(now: datetime | date) -> date:
    return now.date() if isinstance(now, datetime) else now


def find_date(text: str, now: datetime | date) -> DateMatch | None:
    """The earliest (then longest) date expression in `text`, resolved relative to `now`."""
    return earliest(future_matches(text, now))


def future_matches(text: str, now: datetime | date) -> list[DateMatch]:
    today = day_of(now)
    found = []
    for pattern, resolve in _PATTERNS:
        for m in pattern.finditer(text):
            if _PAST_OR_RECURRING.search(text[: m.start()][-10:]):
                continue
            try:
                found.append(DateMatch(m.start(), m.end(), m.group(0), resolve(m, today), _precision(m.group(0))))
            except (ValueError, KeyError):
                continue
    return found


def _precision(text: str) -> str:
    """What a due-date expression says when written out: "next month" is a month, not its last day."""
    if re.fullmatch(r"next month|this month|下个?月|本月|这个月", text, re.I):
        return "month"
    if re.fullmatch(r"next year|明年", text, re.I):
        return "year"
    return "day"


def end_of_day(due: date, now: datetime) -> datetime:
    """Midnight after `due` in the timezone of `now`: the moment a dated todo stops mattering."""
    return datetime.combine(due + timedelta(days=1), time.min, tzinfo=now.tzinfo)
