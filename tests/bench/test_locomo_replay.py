"""bench/locomo_replay.py ranks the dumped evidence exactly as memory_search ranks the owner's rows."""

import json
from pathlib import Path

import pytest

from memories.selectors.retrieval import memory_search
from memories.selectors.search.collection import corpus_counts_forget
from tests.bench.support import bench_script
from tests.factories import ChatSessionFactory, ConversationTurnFactory, MemoryFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

SESSIONS = [
    [
        ("Ana", "I started a pottery class on Thursdays."),
        ("Ben", "Nice, Ana! What do you make there?"),
        ("Ana", "Bowls and a cup with a dog face."),
    ],
    [
        ("Ben", "We went camping at the beach, the kids loved it."),
        ("Ana", "Did you swim in the sea?"),
        ("Ben", "Yes, and we painted the sunset afterwards."),
    ],
]
QUESTIONS = [
    ("What has Ana made in her pottery class?", ["D1:3"]),
    ("Where did Ben go camping?", ["D2:1"]),
    ("What activities does Ben do with his kids?", ["D2:1", "D2:3"]),
]


def _conversation_file(folder: Path) -> None:
    raw = {"speaker_a": "Ana", "speaker_b": "Ben", "qa": []}
    for number, turns in enumerate(SESSIONS, 1):
        raw[f"session_{number}_date_time"] = f"1:56 pm on {number} May, 2023"
        raw[f"session_{number}"] = [
            {"speaker": speaker, "dia_id": f"D{number}:{n}", "text": text} for n, (speaker, text) in enumerate(turns, 1)
        ]
    raw["qa"] = [{"question": q, "answer": "", "evidence": e, "category": 1} for q, e in QUESTIONS]
    (folder / "7.json").write_text(json.dumps(raw))


def test_the_replay_ranks_the_dumped_evidence_as_the_search_does(tmp_path):
    # given an owner holding a two-session conversation and a memory, and its LoCoMo file
    owner = UserFactory(username="locomo-replay")
    for number, turns in enumerate(SESSIONS, 1):
        session = ChatSessionFactory(owner=owner)
        for n, (speaker, text) in enumerate(turns, 1):
            ConversationTurnFactory(
                session=session, sequence=n, speaker=speaker, content=text, metadata={"dia_id": f"D{number}:{n}"}
            )
    MemoryFactory(owner=owner, content="Ana takes pottery classes on Thursdays")
    _conversation_file(tmp_path)
    (tmp_path / "owners.json").write_text(json.dumps({"7": {"username": owner.username}}))
    replay = bench_script("locomo_replay")

    # when the evidence is dumped and replayed
    replay.main(
        [
            "dump",
            "--owners-file",
            str(tmp_path / "owners.json"),
            "--data-dir",
            str(tmp_path),
            "--out",
            str(tmp_path / "d.pkl"),
        ]
    )
    rows = replay.replay(replay.pickle.loads((tmp_path / "d.pkl").read_bytes()), overrides={}, mode="service")

    # then each question's ranked dia_ids are those of memory_search's turn results (no memory here
    # has source turns, so memories add none)
    searched = []
    for question, _ in QUESTIONS:
        found = memory_search(owner=owner, query=question, top_k=20, scope="all")
        searched.append([r["metadata"]["dia_id"] for r in found["results"] if r["type"] == "turn"])
    assert [row["dia_ids"] for row in rows] == searched
    assert [row["recall"]["R@5"] for row in rows] == [1.0, 1.0, 1.0]
    corpus_counts_forget(owner_id=owner.pk)
