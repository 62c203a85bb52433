"""The Evaluate page: `manage.py memory eval` from the browser, on the owner's own data.

The questions file is evaluated in the request (at most EVAL_MAX_BYTES, MAX_QUESTIONS questions):
the report is the command's, shown as a table with each question's first answer rank per system.
"""

from django.contrib.auth.decorators import login_required

from dashboard.layout import page_render
from dashboard.owners import owner_for
from memories.selectors.evaluation import (
    DEFAULT_KS,
    QuestionsError,
    questions_parse,
    retrieval_evaluate,
)

EVAL_MAX_BYTES = 1_000_000


@login_required
def evaluate(request):
    owner = owner_for(request)
    context = {"ks": ",".join(str(k) for k in DEFAULT_KS), "report": None, "error": ""}
    status = 200
    if request.method == "POST":
        upload = request.FILES.get("questions")
        context["ks"] = request.POST.get("ks", context["ks"]).strip()
        try:
            ks = tuple(int(k) for k in context["ks"].split(","))
            if not all(1 <= k <= 100 for k in ks):
                raise ValueError
        except ValueError:
            context["error"] = "Cut-offs must be whole numbers from 1 to 100, separated by commas."
        else:
            if upload is None:
                context["error"] = "Choose a questions file (JSON Lines)."
            elif upload.size > EVAL_MAX_BYTES:
                context["error"] = f"The file is over {EVAL_MAX_BYTES // 1_000_000} MB."
            else:
                try:
                    questions = questions_parse(owner=owner, lines=upload.read().splitlines())
                except (QuestionsError, UnicodeDecodeError) as exc:
                    context["error"] = f"{upload.name}: {exc}"
                else:
                    context["report"] = retrieval_evaluate(owner=owner, questions=questions, ks=ks)
        if context["error"]:
            status = 400
    response = page_render(request, "eval", **context)
    response.status_code = status
    return response
