"""Offline extraction: the deterministic heuristic provider and the helpers it shares with the LLM one.

- `provider`: `HeuristicProvider`, the offline implementation of memories.providers.llm_types.LLMProvider.
- `heuristic`: candidate memories from a conversation's turns; `english/` and `chinese/` hold the
  sentence patterns, one module per kind of statement; `changes` the knowledge updates ("I quit …"),
  `tool_lessons` the lessons from failed tool calls, `completions` the tasks the user finished.
- `summaries`: extractive summaries (rolling summary, compression); `episodes`: episode summaries.
- `dates`, `past_dates`, `date_notes`: date expressions ("by Friday", "下周三", "last Saturday")
  resolved against a turn's time, and written out after themselves in a memory's text.
- `phrasing`: first person → "User …" / "用户…", slot keys (subject / predicate normalisation).
- `lexicon` (domains of terms) and `vocabulary` (occupations, places, attributes): the small word
  lists behind the subject guesses.
"""
