"""The extraction eval set (bench/extraction_eval.py) as a CI guard: P and R at least 0.8 per language."""

import pytest

from tests.bench.support import bench_script


def test_heuristic_extractor_keeps_precision_and_recall_on_the_eval_set():
    # given the annotated English and Chinese conversations in bench/data/extraction
    bench = bench_script("extraction_eval")

    # when the heuristic extractor runs over every one of them
    results = bench.evaluate()

    # then both languages are scored, on the whole set, each at P and R >= 0.8
    assert sorted(results) == ["en", "overall", "zh"]
    assert (results["en"].gold, results["zh"].gold) == (40, 37)
    for language in ("en", "zh"):
        score = results[language]
        assert score.precision >= 0.8, (language, score.false_positives)
        assert score.recall >= 0.8, (language, score.misses)


def test_heuristic_extractor_keeps_precision_and_recall_on_the_holdout_set():
    # given the conversations written after the rules were tuned on the main set
    bench = bench_script("extraction_eval")

    # when the heuristic extractor runs over them
    results = bench.evaluate(bench.DATA_DIR / "holdout")

    # then each language keeps P and R >= 0.8 as well
    assert (results["en"].gold, results["zh"].gold) == (19, 19)
    for language in ("en", "zh"):
        score = results[language]
        assert score.precision >= 0.8, (language, score.false_positives)
        assert score.recall >= 0.8, (language, score.misses)


def test_matching_needs_every_key_term_of_a_fact():
    bench = bench_script("extraction_eval")

    assert bench.matches("User adopted a border collie named Biscuit (2023-05-06)", ["border collie", "Biscuit"])
    assert bench.matches("用户的姐姐在成都结婚", ["姐姐", "成都|重庆"])
    assert not bench.matches("User adopted a border collie", ["border collie", "Biscuit"])
    assert not bench.matches("User adopted a dog last Saturday (2023-05-13)", ["dog", "2023-05-06"])


def test_an_unmatched_memory_counts_against_precision():
    # given a conversation whose one fact is found, and an extractor that also keeps small talk
    bench = bench_script("extraction_eval")
    conversation = {
        "id": "c",
        "now": "2023-05-08T10:00:00+00:00",
        "turns": [{"role": "user", "content": "I moved to Lisbon."}],
        "facts": [{"fact": "lives in Lisbon", "terms": ["Lisbon"]}, {"fact": "has a dog", "terms": ["dog"]}],
    }

    class Candidate:
        action = "remember"

        def __init__(self, content):
            self.content = content

    # when it is scored
    score = bench.score_conversation(conversation, lambda turns: [Candidate("User moved to Lisbon"), Candidate("Hi")])

    # then one of two facts is recalled and one of two memories is correct
    assert (score.gold, score.found, score.extracted, score.correct) == (2, 1, 2, 1)
    assert score.misses == ["c: has a dog  ['dog']"]
    assert score.false_positives == ["c: Hi"]


# (gold, found, extracted, correct) per language, for the sets written by someone who never read the
# rules: a rule that changes what it finds there shows here, to be reported as a change on text it was
# not fitted to.
MEASURED = {
    # independent/: its first measurement (P 0.79 / 0.88, R 0.57 / 0.66), never tuned on.
    "independent": {"en": (30, 17, 19, 15), "zh": (29, 19, 16, 14)},
    # blind/: by a helper that read nothing of the repository, after the rules of 2026-12-08 (first
    # measured at P 0.75 R 0.21, 0.88 / 0.19 on the code before them); these are the figures after the
    # two fixes its false positives led to (a habit whose object is a pronoun or was said before).
    "blind": {"en": (40, 7, 9, 7), "zh": (43, 10, 9, 8)},
}


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_the_sets_written_without_the_rules_score_as_measured(name):
    # given conversations written by someone who never read the rules
    bench = bench_script("extraction_eval")

    # when the heuristic extractor runs over them
    results = bench.evaluate(bench.DATA_DIR / name)

    # then the figures are those recorded
    scored = {
        lang: (results[lang].gold, results[lang].found, results[lang].extracted, results[lang].correct)
        for lang in ("en", "zh")
    }
    assert scored == MEASURED[name]
