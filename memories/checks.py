from django.conf import settings
from django.core.checks import Error, Warning, register


@register()
def memory_configuration(app_configs, **kwargs):
    problems = []
    if settings.LLM_PROVIDER == "openai" and not settings.OPENAI_API_KEY:
        problems.append(Error("LLM_PROVIDER=openai needs OPENAI_API_KEY.", id="memories.E001"))
    if settings.EMBEDDING_PROVIDER == "openai" and not settings.OPENAI_API_KEY:
        problems.append(Error("EMBEDDING_PROVIDER=openai needs OPENAI_API_KEY.", id="memories.E002"))
    if settings.EMBEDDING_PROVIDER == "local" and settings.EMBEDDING_DIM != 384:
        problems.append(Error("The local model gives 384 dimensions; set EMBEDDING_DIM=384.", id="memories.E003"))
    cfg = settings.MEMORY_SCORING
    if not cfg["FORGET_BELOW"] < cfg["ARCHIVE_BELOW"]:
        problems.append(Error("MEMORY_FORGET_BELOW must be below MEMORY_ARCHIVE_BELOW.", id="memories.E004"))
    if not settings.DEBUG and settings.SECRET_KEY and len(settings.SECRET_KEY) < 32:
        problems.append(Warning("SECRET_KEY is short.", id="memories.W001"))
    return problems
