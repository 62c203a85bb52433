"""Retrieval evaluation on an owner's own data: `manage.py memory eval` and the dashboard's page.

Questions come as JSON Lines, each naming the memories and/or turns that answer it:

    {"question": "Where does my sister live?", "memories": ["<memory id or its exact text>"]}
    {"question": "What did I say about the trip?", "turns": ["<turn id>"]}

The service's search is scored beside two plain baselines computed in the same run on the same
rows: Okapi BM25 over the texts (Lucene idf, k1 1.2, b 0.75; English stems, CJK character bigrams)
and dense, the exact cosine between the query's vector and the rows' stored vectors (the same
embedding model the service uses). A question is searched in memories, turns or both, as its
answers are. Recall@k averages, per question, the share of its answers in the first k; MRR the
inverse rank of the first answer found (0 when none is in the first max(k)). Latency is per
question: the service's whole search; BM25's scoring; dense's query vector (usually the one the
search just computed, from the embedding cache) and its ranking. The rows' indexes are built once
per run, untimed.
"""

import json
import math
import re
import statistics
import time
import uuid
from dataclasses import dataclass, field

import numpy as np
import Stemmer

from memories.models import Memory
from memories.selectors.retrieval import memory_search
from memories.selectors.search.statements import SEARCHABLE_STATUSES
from memories.services.embeddings import embedding_get
from memory_project.text import cjk_ngrams, storable
from sessions.models import ConversationTurn

SYSTEMS = ("service", "bm25", "dense")
DEFAULT_KS = (1, 5, 10)
MAX_QUESTIONS = 2000
BM25_K1, BM25_B = 1.2, 0.75
_WORD = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_stemmer = Stemmer.Stemmer("english")


class QuestionsError(ValueError):
    """A questions file that cannot be evaluated; the message names the line."""


@dataclass
class Question:
    text: str
    memories: list[str] = field(default_factory=list)
    turns: list[str] = field(default_factory=list)

    @property
    def scope(self) -> str:
        if self.memories and self.turns:
            return "all"
        return "memories" if self.memories else "turns"

    @property
    def answers(self) -> set[str]:
        return set(self.memories) | set(self.turns)


def questions_parse(*, owner, lines) -> list[Question]:
    """Read JSON Lines; memory answers may be ids or the exact text of one of the owner's memories."""
    questions = []
    by_content = None
    for number, line in enumerate(lines, start=1):
        if isinstance(line, bytes):
            line = line.decode("utf-8")
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise QuestionsError(f"line {number}: not JSON ({exc.msg})") from None
        except ValueError:
            # Python refuses integers of more than 4,300 digits (a guard against quadratic parsing).
            raise QuestionsError(f"line {number}: not JSON (a number of more than 4300 digits)") from None
        except RecursionError:
            raise QuestionsError(f"line {number}: not JSON (nested too deeply)") from None
        if not isinstance(row, dict) or not isinstance(row.get("question"), str) or not row["question"].strip():
            raise QuestionsError(f'line {number}: an object with a non-empty "question" is needed')
        if not storable(row["question"]):
            # The search sends the question to PostgreSQL as text, which cannot hold these.
            raise QuestionsError(f"line {number}: the question may not hold NUL bytes or lone surrogates")
        memories, turns = row.get("memories", []), row.get("turns", [])
        if not isinstance(memories, list) or not isinstance(turns, list) or not (memories or turns):
            raise QuestionsError(f'line {number}: "memories" and/or "turns" must list what answers the question')
        memory_ids = []
        for item in memories:
            if _is_uuid(item):
                memory_ids.append(str(uuid.UUID(item)))
                continue
            if by_content is None:
                by_content = dict(
                    Memory.objects.filter(owner=owner, status__in=SEARCHABLE_STATUSES).values_list("content", "id")
                )
            if not isinstance(item, str) or item not in by_content:
                raise QuestionsError(f"line {number}: no memory of the owner has the id or text {item!r}")
            memory_ids.append(str(by_content[item]))
        bad_turns = [t for t in turns if not _is_uuid(t)]
        if bad_turns:
            raise QuestionsError(f"line {number}: turns are given by id, not {bad_turns[0]!r}")
        questions.append(Question(row["question"].strip(), memory_ids, [str(uuid.UUID(t)) for t in turns]))
        if len(questions) > MAX_QUESTIONS:
            raise QuestionsError(f"at most {MAX_QUESTIONS} questions per run")
    if not questions:
        raise QuestionsError("the file has no questions")
    _check_owned(owner, questions)
    return questions


def _is_uuid(value) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return isinstance(value, str)


def _check_owned(owner, questions: list[Question]) -> None:
    memory_ids = {m for q in questions for m in q.memories}
    turn_ids = {t for q in questions for t in q.turns}
    found = {str(i) for i in Memory.objects.filter(owner=owner, pk__in=memory_ids).values_list("id", flat=True)}
    found |= {
        str(i) for i in ConversationTurn.objects.filter(owner=owner, pk__in=turn_ids).values_list("id", flat=True)
    }
    missing = sorted((memory_ids | turn_ids) - found)
    if missing:
        # Another owner's id is reported exactly like an unknown one.
        raise QuestionsError(f"{len(missing)} answer id(s) are not this owner's memories or turns, e.g. {missing[0]}")


def _tokens(text: str) -> list[str]:
    words = _stemmer.stemWords([w for w in _WORD.findall(text.lower()) if not _CJK.match(w)])
    return words + cjk_ngrams(text, for_query=False).split()


class _Corpus:
    """One scope's rows (ids, BM25 statistics, unit vectors), built once per run, not timed."""

    def __init__(self, rows: list[tuple[str, str, object]]):
        self.ids = [r[0] for r in rows]
        self.tfs, df = [], {}
        for _, text, _ in rows:
            tf: dict[str, int] = {}
            for token in _tokens(text):
                tf[token] = tf.get(token, 0) + 1
            self.tfs.append(tf)
            for token in tf:
                df[token] = df.get(token, 0) + 1
        self.lengths = [sum(tf.values()) for tf in self.tfs]
        self.avgdl = (sum(self.lengths) / len(rows)) if rows else 1.0
        n = len(rows)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        with_vectors = [i for i, r in enumerate(rows) if r[2] is not None]
        self.vector_rows = with_vectors
        if with_vectors:
            matrix = np.array([np.asarray(rows[i][2], dtype=np.float32) for i in with_vectors])
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            self.matrix = matrix / np.where(norms == 0, 1, norms)
        else:
            self.matrix = np.zeros((0, 1), dtype=np.float32)

    def bm25(self, query: str, k: int) -> list[str]:
        terms = _tokens(query)
        scores = []
        for tf, length in zip(self.tfs, self.lengths):
            norm = BM25_K1 * (1 - BM25_B + BM25_B * length / (self.avgdl or 1.0))
            score = 0.0
            for term in terms:
                freq = tf.get(term)
                if freq:
                    score += self.idf[term] * freq * (BM25_K1 + 1) / (freq + norm)
            scores.append(score)
        # Rows without any query term are not "found"; ties go to the earlier row (reproducible).
        order = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: (-scores[i], i))
        return [self.ids[i] for i in order[:k]]

    def dense(self, vector: list[float], k: int) -> list[str]:
        if not self.vector_rows:
            return []
        query = np.asarray(vector, dtype=np.float32)
        query = query / (np.linalg.norm(query) or 1.0)
        similarities = self.matrix @ query
        order = sorted(range(len(self.vector_rows)), key=lambda i: (-float(similarities[i]), i))
        return [self.ids[self.vector_rows[i]] for i in order[:k]]


def _corpora(owner, scopes: set[str]) -> dict[str, _Corpus]:
    memories = turns = []
    if scopes & {"memories", "all"}:
        memories = list(
            Memory.objects.filter(owner=owner, status__in=SEARCHABLE_STATUSES)
            .exclude(expires_at__lte=time_now())
            .order_by("created_at", "id")
            .values_list("id", "content", "embedding")
        )
    if scopes & {"turns", "all"}:
        turns = list(
            ConversationTurn.objects.filter(owner=owner)
            .order_by("created_at", "sequence", "id")
            .values_list("id", "content", "embedding")
        )
    memories = [(str(i), text, vec) for i, text, vec in memories]
    turns = [(str(i), text, vec) for i, text, vec in turns]
    built = {}
    if "memories" in scopes:
        built["memories"] = _Corpus(memories)
    if "turns" in scopes:
        built["turns"] = _Corpus(turns)
    if "all" in scopes:
        built["all"] = _Corpus(memories + turns)
    return built


def time_now():
    from django.utils import timezone

    return timezone.now()


def _recall(ranked: list[str], answers: set[str], k: int) -> float:
    return len(answers.intersection(ranked[:k])) / len(answers)


def _reciprocal_rank(ranked: list[str], answers: set[str]) -> float:
    for rank, item in enumerate(ranked, start=1):
        if item in answers:
            return 1.0 / rank
    return 0.0


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def retrieval_evaluate(*, owner, questions: list[Question], ks: tuple[int, ...] = DEFAULT_KS) -> dict:
    """Recall@k, MRR and latency of the service's search and of the two baselines, per system."""
    ks = tuple(sorted(set(ks)))
    depth = max(ks)
    corpora = _corpora(owner, {q.scope for q in questions})
    # One untimed search first: loading the embedding model and preparing statements is not latency.
    memory_search(owner=owner, query=questions[0].text, top_k=depth, scope=questions[0].scope)
    ranked: dict[str, list[list[str]]] = {s: [] for s in SYSTEMS}
    took: dict[str, list[float]] = {s: [] for s in SYSTEMS}
    for question in questions:
        started = time.perf_counter()
        found = memory_search(owner=owner, query=question.text, top_k=depth, scope=question.scope)
        took["service"].append((time.perf_counter() - started) * 1000)
        ranked["service"].append([r["id"] for r in found["results"]])
        corpus = corpora[question.scope]
        started = time.perf_counter()
        ranked["bm25"].append(corpus.bm25(question.text, depth))
        took["bm25"].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        ranked["dense"].append(corpus.dense(embedding_get(owner=owner, text=question.text, query=True), depth))
        took["dense"].append((time.perf_counter() - started) * 1000)
    systems = {}
    for system in SYSTEMS:
        pairs = list(zip(ranked[system], questions))
        systems[system] = {
            "recall": {str(k): round(statistics.fmean(_recall(r, q.answers, k) for r, q in pairs), 4) for k in ks},
            "mrr": round(statistics.fmean(_reciprocal_rank(r, q.answers) for r, q in pairs), 4),
            "latency_ms": {
                "p50": round(_percentile(took[system], 0.5), 3),
                "p95": round(_percentile(took[system], 0.95), 3),
            },
        }
    return {
        "questions": len(questions),
        "ks": list(ks),
        "rows": {scope: len(corpus.ids) for scope, corpus in corpora.items()},
        "systems": systems,
        "per_question": [
            {
                "question": q.text,
                "answers": sorted(q.answers),
                **{f"{s}_rank": _first_rank(ranked[s][i], q.answers) for s in SYSTEMS},
            }
            for i, q in enumerate(questions)
        ],
    }


def _first_rank(ranked: list[str], answers: set[str]) -> int | None:
    for rank, item in enumerate(ranked, start=1):
        if item in answers:
            return rank
    return None


def evaluation_table(report: dict) -> str:
    """The report as aligned columns (the command's output, the dashboard's <pre>)."""
    ks = report["ks"]
    headers = ["system", *[f"R@{k}" for k in ks], "MRR", "p50 ms", "p95 ms"]
    rows = []
    for system, figures in report["systems"].items():
        rows.append(
            [
                system,
                *[f"{figures['recall'][str(k)]:.3f}" for k in ks],
                f"{figures['mrr']:.3f}",
                f"{figures['latency_ms']['p50']:.1f}",
                f"{figures['latency_ms']['p95']:.1f}",
            ]
        )
    sizes = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(sizes[i]) for i, h in enumerate(headers)).rstrip()]
    lines.append("  ".join("-" * s for s in sizes))
    lines += ["  ".join(c.ljust(sizes[i]) for i, c in enumerate(r)).rstrip() for r in rows]
    return "\n".join(lines)
