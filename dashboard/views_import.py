"""The import page (templates/dashboard/import.html, frontend/src/pages/import.js): a file sent to the
REST import as a background job, with its progress bar, and the owner's recent import jobs."""

from django.contrib.auth.decorators import login_required

from dashboard.layout import page_render
from dashboard.owners import owner_for
from memories.models import ImportJob
from memories.services.transfer import EXPORT_FORMATS, FORMATS

RECENT_JOBS = 20


@login_required
def import_page(request):
    owner = owner_for(request)
    jobs = (
        ImportJob.objects.filter(owner=owner)
        .only("id", "name", "format", "status", "processed", "total", "created_at")
        .order_by("-created_at")[:RECENT_JOBS]
    )
    return page_render(request, "import", formats=FORMATS, export_formats=EXPORT_FORMATS, jobs=list(jobs))
