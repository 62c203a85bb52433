"""The absolute date written after each relative date expression of a memory's text, "last Saturday
(2023-05-06)" / "上周六（2023-05-06）", so the memory still says when once the conversation's time
is gone, and a temporal question finds it by its date."""

import re
from datetime import date, datetime, timedelta

from memories.extraction.dates import WEEKDAY_NAMES, DateMatch, day_of, future_matches, position
from memories.extraction.past_dates import past_matches

_ANNOTATED = re.compile(r"^\s*[(（]\d{4}(?:-\d{2}){0,2}[)）]")


# Written-out dates need no annotation; "today" alone says nothing worth a date in a preference.
_SELF_DATED = re.compile(r"\d{4}|^(?:today|tonight|今天|今晚)$", re.I)


_BARE_WEEKDAY = re.compile(rf"^(?:{WEEKDAY_NAMES}|(?:周|星期|礼拜)[一二三四五六日天])$", re.I)


def annotate_dates(
    text: str, now: datetime | date, *, past: bool = True, future: bool = True, bare_weekdays: bool | str = True
) -> str:
    """`text` with the absolute date written after each relative date expression in it.

    `bare_weekdays=False` leaves "Friday" / "周五" alone where the tense does not say which one;
    "past" reads them as the last such day, for a statement in the past tense ("gave birth on Saturday")."""
    future_found = future_matches(text, now) if future else []
    if bare_weekdays is not True:
        bare = [d for d in future_found if _BARE_WEEKDAY.match(d.text)]
        future_found = [d for d in future_found if not _BARE_WEEKDAY.match(d.text)]
        if bare_weekdays == "past":
            today = day_of(now)
            for d in bare:
                back = (today.weekday() - (d.due.weekday())) % 7 or 7
                future_found.append(DateMatch(d.start, d.end, d.text, today - timedelta(days=back)))
    found = (past_matches(text, now) if past else []) + future_found
    # Longest first at each position, then no overlaps: "last Saturday" wins over "Saturday".
    found.sort(key=position)
    chosen: list[DateMatch] = []
    for match in found:
        if chosen and match.start < chosen[-1].end:
            continue
        chosen.append(match)
    for match in reversed(chosen):
        if _SELF_DATED.search(match.text) or _ANNOTATED.match(text[match.end :]):
            continue
        note = f"（{match.iso}）" if re.search(r"[\u4e00-\u9fff]", match.text) else f" ({match.iso})"
        text = text[: match.end] + note + text[match.end :]
    return text
