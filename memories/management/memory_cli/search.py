"""`manage.py memory search` and `eval`: what search finds, and how well it finds what questions expect."""

import json
import sys

from django.conf import settings
from django.core.management.base import CommandError

from memories.management.tables import CONTENT_WIDTH, render_table
from memories.providers.embeddings import embedder_warm_up
from memories.selectors.evaluation import QuestionsError, evaluation_table, questions_parse, retrieval_evaluate
from memories.selectors.retrieval import memory_search
from memory_project.cli import command_owner


class SearchCommands:
    """Mixed into `manage.py memory`'s Command, which gives self._owner and self.stdout."""

    # -- eval ------------------------------------------------------------------------------------

    def _eval(self, *, owner, questions, k, as_json, **_):
        owner = command_owner(owner)
        try:
            ks = tuple(int(x) for x in k.split(","))
        except ValueError:
            raise CommandError(f"--k must be whole numbers separated by commas, got {k!r}") from None
        if not ks or not all(1 <= x <= settings.MAX_TOP_K for x in ks):
            raise CommandError(f"each --k must be between 1 and {settings.MAX_TOP_K}")
        try:
            if questions == "-":
                parsed = questions_parse(owner=owner, lines=sys.stdin)
            else:
                with open(questions, encoding="utf-8") as handle:
                    parsed = questions_parse(owner=owner, lines=handle)
        except OSError as exc:
            raise CommandError(f"cannot read {questions}: {exc.strerror}") from None
        except (QuestionsError, UnicodeDecodeError) as exc:
            raise CommandError(f"{questions}: {exc}") from None
        report = retrieval_evaluate(owner=owner, questions=parsed, ks=ks)
        if as_json:
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            return
        rows = ", ".join(f"{n} {scope}" for scope, n in report["rows"].items())
        self.stdout.write(f"{report['questions']} questions for {owner.get_username()}, searched in: {rows}")
        self.stdout.write(evaluation_table(report))

    # -- search ----------------------------------------------------------------------------------

    def _search(self, *, query, owner, top_k, scope, **_):
        owner = command_owner(owner)
        if not 1 <= top_k <= settings.MAX_TOP_K:
            raise CommandError(f"--top-k must be between 1 and {settings.MAX_TOP_K}")
        if not query.strip() or "\x00" in query:
            raise CommandError("the query must be non-empty text")
        # The model loads before the clock starts: "in N ms" is the search, as a running server sees it.
        embedder_warm_up()
        found = memory_search(owner=owner, query=query, top_k=top_k, scope=scope)
        if not found["results"]:
            self.stdout.write(f"No results for {query!r} ({found['took_ms']:.0f} ms).")
            return
        rows = []
        for rank, r in enumerate(found["results"], start=1):
            if r["type"] == "memory":
                kind = f"{r['category']}/{r['status']}"
            else:
                kind = f"turn/{r['role']}"
            rows.append([rank, f"{r['score']:.3f}", r["type"], kind, r["id"], r["content"]])
        self.stdout.write(
            render_table(["#", "score", "type", "kind", "id", "content"], rows, widths={5: CONTENT_WIDTH})
        )
        self.stdout.write(f"{len(rows)} result(s) in {found['took_ms']:.0f} ms")
