"""Offline extraction: the deterministic heuristic provider and the helpers it shares with the LLM one.

- `heuristic`: pattern-based extraction of candidate memories from English and Chinese turns.
- `summaries`: extractive summaries (rolling summary, compression, episodes).
- `dates`: relative date expressions ("by Friday", "下周三") resolved against a turn's time.
- `phrasing`: first person → "User …" / "用户…", slot keys (subject / predicate normalisation).
- `lexicon`: small vocabularies (domains, occupations, places) behind the subject guesses.
"""
