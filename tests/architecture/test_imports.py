"""The layering of the apps (issue 15): no import circle between them, and project code imported at
the top of a module unless a comment on the import (or the line above it) says why it cannot be."""

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (
    "accesslog",
    "analytics",
    "attachments",
    "dashboard",
    "erasure",
    "hotcache",
    "integrations",
    "memories",
    "memory_groups",
    "memory_project",
    "sessions",
    "web",
)


def _project_import(node: ast.stmt) -> bool:
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        names = [node.module]
    elif isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        return False
    return any(name.split(".")[0] in PACKAGES for name in names)


def _function_body_imports(path: Path) -> list[str]:
    """Imports of project code inside functions with no comment on their first line or above the
    run of imports they belong to."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for block in ast.walk(function):
            for field in ("body", "orelse", "finalbody", "handlers"):
                statements = getattr(block, field, None)
                if not isinstance(statements, list):
                    continue
                run_start = None
                for i, statement in enumerate(statements):
                    is_import = isinstance(statement, ast.Import | ast.ImportFrom)
                    if is_import and (i == 0 or not isinstance(statements[i - 1], ast.Import | ast.ImportFrom)):
                        run_start = statement.lineno
                    if not (is_import and _project_import(statement)):
                        continue
                    said = "#" in lines[statement.lineno - 1] or lines[run_start - 2].strip().startswith("#")
                    if not said:
                        found.append(f"{path.relative_to(ROOT)}:{statement.lineno}")
    return sorted(set(found))


def unexplained_imports() -> list[str]:
    """Every production module's (tests and migrations aside) unexplained imports inside functions."""
    modules = [p for package in PACKAGES for p in (ROOT / package).rglob("*.py") if "migrations" not in p.parts]
    return [where for path in modules for where in _function_body_imports(path)]


def test_project_code_is_imported_at_module_top_unless_a_comment_says_why():
    # Given every production module
    # When their imports inside functions are listed, in a fresh interpreter: CPython 3.11.7's parser
    # can fail with "AST constructor recursion depth mismatch" when called deep in a long test run
    script = "import json; from tests.architecture.test_imports import unexplained_imports as u; print(json.dumps(u()))"
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True)

    # Then none imports project code without saying why
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_the_apps_import_each_other_only_downwards():
    # Given the layers declared in pyproject.toml ([tool.importlinter]: web on top, memory_project below all)
    # When import-linter checks every import, direct or through other modules
    result = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )

    # Then no app imports one above it, so no two apps import each other
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 1 kept, 0 broken." in result.stdout
