"""The offline LLM provider: deterministic pattern-based extraction and extractive summaries."""

from memories.extraction.episodes import episode_summary
from memories.extraction.heuristic import extract_candidates
from memories.extraction.summaries import compress_memories, summarize_text
from memories.providers.llm_types import CandidateMemory, EpisodeSummary, TurnView


class HeuristicProvider:
    name = "heuristic"

    def extract(self, *, turns: list[TurnView], existing: list[str]) -> list[CandidateMemory]:
        # What is already known only names the attributes a new value may be given: a memory said
        # again is not left out, since the merge decision must see it to reinforce it.
        return extract_candidates(turns, known=existing)

    def summarize_episode(self, *, turns: list[TurnView]) -> EpisodeSummary:
        return episode_summary(turns)

    def summarize(self, *, text: str, max_tokens: int) -> str:
        return summarize_text(text, max_tokens)

    def compress(self, *, memories: list[str]) -> list[str]:
        return compress_memories(memories)
