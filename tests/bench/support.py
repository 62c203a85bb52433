"""What the tests of the bench scripts share: a script of bench/ loaded as a module."""

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def bench_script(name: str):
    """bench/<name>.py as a module. bench/ is not a package, so it is loaded by path, with bench/ on
    sys.path for the scripts' imports of each other (harness, search_latency)."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"{name}_bench", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
