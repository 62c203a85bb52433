"""Life events, family and pets in English: what happened to the user, with its date resolved."""

from datetime import UTC, datetime

import pytest

from memories.extraction.heuristic import extract_candidates
from tests.memories.extraction.builders import turn, user_says

SAID_AT = datetime(2023, 5, 8, 10, 0, tzinfo=UTC)  # a Monday


def extracted(line: str) -> list[tuple]:
    return [
        (c.content, c.category, c.subject, c.predicate, c.value, c.event_date)
        for c in extract_candidates(user_says(line, at=SAID_AT), [])
    ]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "Quick life update: I finally moved from Berlin to Lisbon last month.",
            [
                (
                    "User finally moved from Berlin to Lisbon last month (2023-04)",
                    "fact",
                    "residence",
                    "lives in",
                    "Lisbon",
                    "2023-04",
                )
            ],
        ),
        (
            "We adopted a border collie named Biscuit last Saturday!",
            [
                (
                    "User and their family adopted a border collie named Biscuit last Saturday (2023-05-06)",
                    "fact",
                    "adopted a border collie named biscuit",
                    "event",
                    "a border collie named Biscuit",
                    "2023-05-06",
                )
            ],
        ),
        (
            "I was diagnosed with celiac disease two weeks ago.",
            [
                (
                    "User was diagnosed with celiac disease two weeks ago (2023-04-24)",
                    "fact",
                    "was diagnosed with celiac disease",
                    "event",
                    "with celiac disease",
                    "2023-04-24",
                )
            ],
        ),
        (
            "I finally finished my tax return yesterday.",
            [
                (
                    "User finally finished their tax return yesterday (2023-05-07)",
                    "fact",
                    "finished their tax return",
                    "done",
                    "their tax return",
                    "2023-05-07",
                )
            ],
        ),
        (
            "Big news in the family: my sister Anna just had a baby girl called Mia.",
            [
                (
                    "User's sister Anna just had a baby girl called Mia",
                    "fact",
                    "sister anna",
                    "",
                    "had a baby girl called Mia",
                    "",
                )
            ],
        ),
        (
            "I grew up in Nairobi, but I've lived in Toronto since 2015.",
            [
                ("User grew up in Nairobi", "fact", "origin", "is from", "Nairobi", ""),
                ("User has lived in Toronto since 2015", "fact", "residence", "lives in", "Toronto", ""),
            ],
        ),
        (
            "Coffee makes me jittery, so these days I stick to green tea.",
            [("User sticks to green tea", "preference", "green tea", "opinion", "likes", "")],
        ),
        ("And I'm 34, not 43 like I wrote earlier.", [("User is 34 years old", "fact", "age", "is", "34", "")]),
    ],
)
def test_life_events_become_dated_facts(line, expected):
    # given one user turn said on Monday 2023-05-08
    # when the heuristic extracts it
    # then the event is one fact, its relative date written out
    assert extracted(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "I saw your message yesterday.",
        "I tried that already.",
        "I left it on the table.",
        "lol, my cat just knocked the music stand over",
        "I finished it.",
        "My boss asked me about it yesterday.",
    ],
)
def test_past_tense_conversation_is_not_a_life_event(line):
    assert extracted(line) == []


def test_a_correction_of_one_value_rewrites_what_was_said():
    # given an office named, then corrected with "it's X, not Y"
    turns = [
        turn(1, "user", "I work at Deloitte in their Boston office.", at=SAID_AT),
        turn(2, "assistant", "Great, how long have you been there?", at=SAID_AT),
        turn(3, "user", "Sorry, correction: it's the Chicago office, not Boston.", at=SAID_AT),
    ]

    # when the heuristic extracts the conversation
    found = extract_candidates(turns, [])

    # then one memory holds the corrected value, from the correcting turn
    assert [(c.content, c.subject, c.value, c.confidence, c.source_sequences) for c in found] == [
        ("User works at Deloitte in their Chicago office", "employer", "Deloitte", 0.95, [3])
    ]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "Finally submitted my thesis this afternoon!!",
            [
                (
                    "User finally submitted their thesis this afternoon (2023-05-08)",
                    "fact",
                    "submitted their thesis",
                    "done",
                    "their thesis",
                    "2023-05-08",
                )
            ],
        ),
        (
            "I'm also lactose intolerant, so please skip dairy in any recipes you suggest.",
            [("User is lactose intolerant", "fact", "diet", "is", "lactose intolerant", "")],
        ),
        (
            "My defense is on July 20 at 10am.",
            [
                (
                    "User's defense is on July 20 (2023-07-20) at 10am",
                    "todo",
                    "defense is at 10am",
                    "due",
                    "2023-07-20",
                    "",
                )
            ],
        ),
    ],
)
def test_subjectless_news_health_states_and_appointments(line, expected):
    assert extracted(line) == expected


@pytest.mark.parametrize(
    ("line", "content"),
    [
        (
            "When you write SQL for me, always use uppercase keywords.",
            "User wants the assistant to always use uppercase keywords when writing SQL for the user",
        ),
        # a bare weekday in the past tense is the last such day (said on Monday 2023-05-08)
        (
            "Guess what — my wife gave birth to our second son on Saturday!",
            "User's wife gave birth to their second son on Saturday (2023-05-06)",
        ),
        ("Heads up: I'm vegan now, have been since January.", "User is vegan"),
    ],
)
def test_scoped_rules_past_weekdays_and_states_said_in_passing(line, content):
    assert [c[0] for c in extracted(line)] == [content]


def test_someone_elses_remark_is_not_an_attribute_of_the_user():
    assert extracted("my teacher says my bowls are getting less wonky lol") == []


@pytest.mark.parametrize(
    "line",
    [
        "Nah, I haven't.",
        "Nope, never been to something like that.",
        "Oops, sorry 'bout the accident!",
        "Yeah, I love to.",
    ],
)
def test_answers_and_sympathy_after_no_or_oops_are_not_memories(line):
    assert extracted(line) == []
