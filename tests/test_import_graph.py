"""The import graph of the project's packages (issue 15): no circle between them, memory_project
below every app, sessions below memories. Imports inside function bodies count: they used to hide
such circles."""

from pathlib import Path

import grimp
import pytest
from django.apps import apps
from django.conf import settings


@pytest.fixture(scope="module")
def graph():
    root = Path(settings.BASE_DIR).resolve()
    tops = {config.name.split(".")[0]: Path(config.path).resolve() for config in apps.get_app_configs()}
    ours = {top for top, path in tops.items() if path.is_relative_to(root / top)}
    return grimp.build_graph(*sorted(ours | {"memory_project"}), cache_dir=None)


def _packages_importing(graph, package: str) -> set[str]:
    """The other top-level packages that `package`'s modules import directly."""
    imported = set()
    for module in graph.find_descendants(package) | {package}:
        imported |= {m.split(".")[0] for m in graph.find_modules_directly_imported_by(module)}
    return imported - {package}


def test_no_import_circle_between_packages(graph):
    # given each top-level package and the packages it imports
    packages = {m.split(".")[0] for m in graph.modules}
    edges = {package: _packages_importing(graph, package) for package in packages}

    # when each package's imports are followed as far as they go
    def reachable(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in edges[todo.pop()] - seen:
                seen.add(nxt)
                todo.append(nxt)
        return seen

    # then none of them leads back to the package it started from
    assert sorted(p for p in packages if p in reachable(p)) == []


def test_memory_project_imports_no_app(graph):
    others = {m.split(".")[0] for m in graph.modules} - {"memory_project"}

    reached = [app for app in others if graph.chain_exists(importer="memory_project", imported=app, as_packages=True)]
    assert sorted(reached) == []


def test_sessions_import_nothing_of_the_memories_built_on_them(graph):
    assert graph.find_shortest_chain(importer="sessions", imported="memories", as_packages=True) is None
