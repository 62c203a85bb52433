"""`manage.py memory eval`: Recall@k, MRR and latency on the owner's own data, beside BM25 and dense."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests.factories import ChatSessionFactory, ConversationTurnFactory, MemoryFactory

CAT = "Miso the grey cat sleeps on the sofa"
ADOPTED = "Miso the grey cat was adopted in May"
NURSE = "Works as a nurse at the hospital in Porto"
CELLO = "Plays the cello every Sunday evening"
BIKE = "Rides a red bicycle to work"


@pytest.fixture
def scene(user):
    return {text: MemoryFactory(owner=user, content=text) for text in (CAT, ADOPTED, NURSE, CELLO, BIKE)}


def _run(tmp_path, lines, *args) -> str:
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    out = StringIO()
    call_command("memory", "eval", "--owner", "alice", "--questions", str(path), *args, stdout=out)
    return out.getvalue()


def test_known_answers_give_exact_recall_and_mrr_for_every_system(tmp_path, user, scene):
    # given questions whose answers are placed by construction, the same for all three systems:
    # - a question that is an answer's own text: that answer first
    # - two answers, one the question's text and one sharing no word with it (BM25 never finds
    #   it; search and dense rank every one of the five memories, so it is within the first 10)
    # - a question that is another memory's text, its answer sharing four of its words: second
    questions = [
        {"question": NURSE, "memories": [str(scene[NURSE].pk)]},
        {"question": CELLO, "memories": [CELLO, BIKE]},
        {"question": CAT, "memories": [ADOPTED]},
    ]

    # when alice evaluates with cut-offs 1 and 10
    report = json.loads(_run(tmp_path, questions, "--k", "1,10", "--json"))

    # then each system's figures are those the construction gives
    assert report["questions"] == 3 and report["ks"] == [1, 10] and report["rows"] == {"memories": 5}
    first_hit = (1 + 1 / 2 + 0) / 3
    expected_mrr = round((1 + 1 + 1 / 2) / 3, 4)
    for system, recall_at_10 in (("service", 1.0), ("dense", 1.0), ("bm25", (1 + 1 / 2 + 1) / 3)):
        figures = report["systems"][system]
        assert figures["recall"] == {"1": round(first_hit, 4), "10": round(recall_at_10, 4)}, system
        assert figures["mrr"] == expected_mrr, system
        assert set(figures["latency_ms"]) == {"p50", "p95"} and figures["latency_ms"]["p50"] >= 0
    assert [(q["service_rank"], q["bm25_rank"], q["dense_rank"]) for q in report["per_question"]] == [
        (1, 1, 1),
        (1, 1, 1),
        (2, 2, 2),
    ]


def test_the_table_names_each_system(tmp_path, user, scene):
    # when alice evaluates one question, as a table
    out = _run(tmp_path, [{"question": NURSE, "memories": [NURSE]}])

    # then the table has the default cut-offs and one row per system, perfect here
    lines = out.splitlines()
    assert lines[0] == "1 questions for alice, searched in: 5 memories"
    assert lines[1].split() == ["system", "R@1", "R@5", "R@10", "MRR", "p50", "ms", "p95", "ms"]
    assert [line.split()[:5] for line in lines[3:]] == [
        [system, "1.000", "1.000", "1.000", "1.000"] for system in ("service", "bm25", "dense")
    ]


def test_turns_are_answers_too(tmp_path, user):
    # given a session whose turn answers the question
    session = ChatSessionFactory(owner=user)
    turn = ConversationTurnFactory(session=session, sequence=1, content="We moved to Lisbon in March")
    ConversationTurnFactory(session=session, sequence=2, content="The weather was lovely")

    # when evaluated
    report = json.loads(
        _run(tmp_path, [{"question": "We moved to Lisbon in March", "turns": [str(turn.pk)]}], "--json")
    )

    # then the question was searched in turns, where each system finds the turn first
    assert report["rows"] == {"turns": 2}
    assert [report["systems"][s]["mrr"] for s in ("service", "bm25", "dense")] == [1.0, 1.0, 1.0]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"question": "x"'], "line 1: not JSON"),
        (['{"question": "", "memories": ["a"]}'], 'line 1: an object with a non-empty "question" is needed'),
        (['{"question": "x"}'], 'line 1: "memories" and/or "turns" must list what answers the question'),
        (['{"question": "x", "memories": ["no such text"]}'], "line 1: no memory of the owner has the id or text"),
        (['{"question": "x", "turns": ["3"]}'], "line 1: turns are given by id, not '3'"),
        ([""], "the file has no questions"),
    ],
)
def test_a_bad_questions_file_is_a_clear_error(tmp_path, user, scene, lines, message):
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(CommandError, match=message.replace("(", r"\(")) as error:
        call_command("memory", "eval", "--owner", "alice", "--questions", str(path))
    assert str(path) in str(error.value)


def test_another_owners_memory_is_never_an_answer(tmp_path, user, other_user, scene):
    # given a question naming bob's memory by id
    bobs = MemoryFactory(owner=other_user, content=NURSE)

    # when alice evaluates it, then it is refused like an unknown id
    with pytest.raises(CommandError, match="1 answer id\\(s\\) are not this owner's memories or turns"):
        _run(tmp_path, [{"question": NURSE, "memories": [str(bobs.pk)]}])


def test_bad_cut_offs_and_missing_files_are_errors(tmp_path, user):
    with pytest.raises(CommandError, match="--k must be whole numbers"):
        call_command("memory", "eval", "--owner", "alice", "--questions", "x", "--k", "one")
    with pytest.raises(CommandError, match="cannot read"):
        call_command("memory", "eval", "--owner", "alice", "--questions", str(tmp_path / "missing.jsonl"))
