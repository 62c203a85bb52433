"""Builds the full-text query: English words OR-ed (stemmed by PostgreSQL), CJK as n-grams."""

import re

from memories.text import cjk_ngrams

_TOKEN = re.compile(r"[A-Za-z0-9]+")


def tsquery_parts(query: str) -> tuple[str, str]:
    """(english_expr, simple_expr) for to_tsquery; either may be empty.

    OR semantics: a memory that shares some of the question's words is a candidate; ranking sorts
    out how many it shares. AND (plainto_tsquery) loses most answers to natural-language questions.
    """
    english = " | ".join(dict.fromkeys(t.lower() for t in _TOKEN.findall(query)))
    simple = " | ".join(dict.fromkeys(cjk_ngrams(query, for_query=True).split()))
    return english, simple


def tsquery_sql(query: str) -> tuple[str, list[str]] | None:
    """SQL expression and params for the combined tsquery, or None when the query has no terms."""
    english, simple = tsquery_parts(query)
    parts, params = [], []
    if english:
        parts.append("to_tsquery('english', %s)")
        params.append(english)
    if simple:
        parts.append("to_tsquery('simple', %s)")
        params.append(simple)
    if not parts:
        return None
    return " || ".join(parts), params
