"""Settings, read from environment variables with safe defaults (memory_project.env fails loudly on a
bad value): one module per concern, each importing from the others what it builds on, gathered here."""

from memory_project.settings.api import *  # noqa: F403
from memory_project.settings.background import *  # noqa: F403
from memory_project.settings.core import *  # noqa: F403
from memory_project.settings.database import *  # noqa: F403
from memory_project.settings.engine import *  # noqa: F403
from memory_project.settings.features import *  # noqa: F403
from memory_project.settings.integrations import *  # noqa: F403
from memory_project.settings.logs import *  # noqa: F403
from memory_project.settings.web import *  # noqa: F403
