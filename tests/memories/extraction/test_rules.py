import re

from memories.extraction.candidates import MEDIUM, Ctx, make
from memories.extraction.rules import FirstMatch
from tests.memories.extraction.builders import turn

CTX = Ctx(turn=turn(1, "user", "I'm on a boat"))


def _table() -> FirstMatch:
    table = FirstMatch(re.I)

    @table.rule(r"^i'm on (?P<what>.+)$")
    def _on(m: re.Match, clause: str, ctx: Ctx):
        if m["what"] == "it":
            return None
        return make(ctx, f"User is on {m['what']}", "fact", MEDIUM)

    table.add(r"^i'm (?P<what>.+)$", lambda m, clause, ctx: make(ctx, f"User is {m['what']}", "fact", MEDIUM))
    return table


def test_the_first_rule_in_order_that_matches_builds_the_candidate():
    assert _table()("I'm on a boat", CTX).content == "User is on a boat"
    assert _table()("I'm tired", CTX).content == "User is tired"


def test_a_matching_rule_that_keeps_nothing_decides_for_the_later_ones():
    assert _table()("I'm on it", CTX) is None


def test_no_match_keeps_nothing():
    assert _table()("We're on a boat", CTX) is None


def test_a_pattern_may_be_a_function_that_finds_the_match():
    table = FirstMatch()
    table.add(
        lambda clause: re.match(r"(?P<word>\w+)$", clause.strip()), lambda m, c, ctx: make(ctx, m["word"], "fact", 0.5)
    )
    assert table("  hello ", CTX).content == "hello"


def test_an_extended_table_tries_the_first_tables_rules_then_its_own():
    base = _table()
    more = base.extended()
    more.add(r"^we're (?P<what>.+)$", lambda m, clause, ctx: make(ctx, f"User's team is {m['what']}", "fact", MEDIUM))
    assert more("I'm tired", CTX).content == "User is tired"
    assert more("We're on a boat", CTX).content == "User's team is on a boat"
    assert base("We're on a boat", CTX) is None
