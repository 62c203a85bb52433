import json
import os

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand

from memories.models import ApiKey
from memories.providers.embeddings import embedder_prepare
from memories.services.api_keys import api_key_create, api_key_hash
from web.webserver import web_server_run

DEMO_USER = "demo"


def banner_lines(*, host: str, port: int, credentials: tuple[str, str] | None) -> list[str]:
    """What `make run` prints: where the service is, and with the demo owner, how to log in to the
    dashboard (its own login page, not the Django admin's) and call the API."""
    base = f"http://{host}:{port}"
    lines = [f"Agent memory service on {base}/"]
    if credentials is not None:
        password, key = credentials
        lines += [
            f"Dashboard login: {DEMO_USER} / {password}  ({base}/accounts/login/)",
            f"Django admin: {base}/admin/",
            f"API docs: {base}/api/docs/",
            f"Demo API key: {key}",
            f'Try: curl -s -H "Authorization: Token {key}" {base}/api/v1/memories/',
        ]
    return lines


class Command(BaseCommand):
    help = (
        "Migrate, make sure a demo owner exists, print how to reach the service, and serve it "
        "(gunicorn with uvicorn workers: HTTP and WebSockets)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument("--no-demo", action="store_true", help="Do not create the demo owner.")
        parser.add_argument("--workers", type=int, help="Worker processes (default WEB_CONCURRENCY: the cores).")

    def handle(self, *args, host, port, no_demo, workers, **options):
        call_command("migrate", interactive=False, verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        workers = workers or settings.WEB_CONCURRENCY
        credentials = None if no_demo else self._demo_credentials()
        lines = banner_lines(host=host, port=port, credentials=credentials)
        self.stdout.write("\n".join(lines), self.style.SUCCESS)
        self.stdout.flush()
        # Once, before the workers fork: the ONNX build of the local model, if it is not there yet.
        embedder_prepare()
        # Without a broker, each worker runs the periodic tasks' stand-in for beat, one at a time.
        web_server_run(host=host, port=port, workers=workers)

    def _demo_credentials(self) -> tuple[str, str]:
        """Credentials kept in the git-ignored data folder, so every start prints the same ones."""
        path = settings.DATA_DIR / "demo-credentials.json"
        saved = json.loads(path.read_text()) if path.exists() else {}
        User = get_user_model()
        user = User.objects.filter(username=DEMO_USER).first()
        password = saved.get("password")
        if user is None or not password or not user.check_password(password):
            import secrets

            password = secrets.token_urlsafe(12)
            user = user or User(username=DEMO_USER, email="demo@example.com")
            user.is_staff = user.is_superuser = True
            user.set_password(password)
            user.save()
        key = saved.get("api_key")
        if (
            not key
            or not ApiKey.objects.filter(key_hash=api_key_hash(key), owner=user, revoked_at__isnull=True).exists()
        ):
            _, key = api_key_create(username=DEMO_USER, name="demo (make run)")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"username": DEMO_USER, "password": password, "api_key": key}))
        path.chmod(0o600)
        return password, key
