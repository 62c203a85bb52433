from django.conf import settings
from django.core.checks import Error, Warning, register


@register()
def access_log_configuration(app_configs, **kwargs):
    problems = []
    days = settings.ACCESS_LOG_RETENTION_DAYS
    if not isinstance(days, int) or isinstance(days, bool) or days < 0:
        problems.append(
            Error(
                f"ACCESS_LOG_RETENTION_DAYS must be a whole number of days, 0 or more (got {days!r}).",
                hint="0 keeps no access log at all.",
                id="accesslog.E001",
            )
        )
    elif days > 3650:
        problems.append(
            Warning(
                f"ACCESS_LOG_RETENTION_DAYS={days} keeps which queries found each memory for over ten years.",
                id="accesslog.W001",
            )
        )
    if settings.ACCESS_LOG_FLUSH_SECONDS <= 0 or settings.ACCESS_LOG_FLUSH_ENTRIES < 1:
        problems.append(
            Error(
                "ACCESS_LOG_FLUSH_SECONDS must be above 0 and ACCESS_LOG_FLUSH_ENTRIES at least 1.", id="accesslog.E002"
            )
        )
    return problems
