"""Ranking of fused candidates: replies to questions, the speaker a question names, and spreading
a question that asks for several things over sessions."""

from datetime import UTC, datetime

from memories.selectors.search.fusion import Candidate, candidates_rank

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _turn(key: str, *, session: str, sequence: int, similarity: float, content: str = "", speaker: str = ""):
    # created at the epoch: recency is nil, so a score is 0.6 × relevance + 0.25 × 0.5.
    row = {"content": content, "speaker": speaker, "session_id": session, "sequence": sequence, "created_us": 0}
    return Candidate(type="turn", id=key, vector_rank=1, similarity=similarity, row=row)


def _rank(candidates: list[Candidate], query: str) -> list[tuple[str, dict]]:
    return [(r["candidate"].id, r["scores"]) for r in candidates_rank(candidates, query=query, now=NOW, top_k=10)]


def test_the_reply_to_a_question_takes_a_larger_share_of_its_score_than_other_neighbours():
    # given a question and its reply, and a statement followed by another turn, similarities alike
    candidates = [
        _turn("question", session="a", sequence=1, similarity=0.5, content="Where did you go?"),
        _turn("reply", session="a", sequence=2, similarity=0.0, content="Paris"),
        _turn("statement", session="b", sequence=1, similarity=0.5, content="We went away."),
        _turn("after", session="b", sequence=2, similarity=0.0, content="Paris"),
    ]

    # when they are ranked
    boosts = {key: scores["neighbor_boost"] for key, scores in _rank(candidates, "anything")}

    # then the reply takes 0.3 of the question's relevance (0.7 × 0.5), the other turn 0.2 of it
    assert boosts == {"question": 0.0, "reply": 0.105, "statement": 0.0, "after": 0.07}


def test_a_question_naming_one_speaker_lowers_the_other_speakers_turns():
    # given the same thing said by two speakers in two sessions
    candidates = [
        _turn("caroline", session="a", sequence=1, similarity=0.5, speaker="Caroline"),
        _turn("melanie", session="b", sequence=1, similarity=0.5, speaker="Melanie"),
    ]

    # when a question names one of them, and another names both
    one = dict(_rank(candidates, "What did Caroline paint?"))
    both = dict(_rank(candidates, "What did Caroline and Melanie paint?"))

    # then only the first lowers the other speaker (0.9 of 0.7 × 0.5); the named get the speaker boost
    assert (one["caroline"]["relevance"], one["melanie"]["relevance"]) == (0.5, 0.315)
    assert (both["caroline"]["relevance"], both["melanie"]["relevance"]) == (0.5, 0.5)


def test_a_question_asking_for_several_things_spreads_its_first_results_over_sessions():
    # given two good turns of one session and a slightly weaker one of another
    candidates = [
        _turn("first", session="a", sequence=1, similarity=0.8),
        _turn("second", session="a", sequence=10, similarity=0.75),
        _turn("elsewhere", session="b", sequence=1, similarity=0.7),
    ]

    # when a question asks for one thing, and when it asks for several
    one = _rank(candidates, "What did she enjoy?")
    several = _rank(candidates, "What activities does she enjoy?")

    # then the first keeps the score order; the second lowers the second turn of session a (× 0.9)
    # below the other session's
    assert [(key, scores["session_diversity"]) for key, scores in one] == [
        ("first", 1.0),
        ("second", 1.0),
        ("elsewhere", 1.0),
    ]
    assert [(key, scores["session_diversity"]) for key, scores in several] == [
        ("first", 1.0),
        ("elsewhere", 1.0),
        ("second", 0.9),
    ]


def test_results_spread_over_sessions_are_listed_with_their_lowered_scores_in_order():
    # given three turns of one session and one of another
    candidates = [_turn(f"a{n}", session="a", sequence=n * 10, similarity=0.8 - n * 0.01) for n in range(3)]
    candidates.append(_turn("b", session="b", sequence=1, similarity=0.6))

    # when a question asking for several things ranks them
    ranked = candidates_rank(candidates, query="Which cities has Jon visited?", now=NOW, top_k=10)

    # then the scores, lowered once per earlier result of the same session, still go down
    scores = [r["score"] for r in ranked]
    assert [r["candidate"].id for r in ranked] == ["a0", "a1", "b", "a2"]
    assert scores == sorted(scores, reverse=True)
    assert [r["scores"]["session_diversity"] for r in ranked] == [1.0, 0.9, 1.0, 0.81]
