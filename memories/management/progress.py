"""A progress bar for long imports in the CLI, fed by memories.services.import_validation.import_progress."""

from contextlib import contextmanager

from memories.services.import_validation import import_progress

WIDTH = 30


@contextmanager
def import_progress_bar(out, label: str = "import"):
    """Draw `[####....]  42% 420/1000` on `out` (stderr: stdout stays the report) while the block runs."""
    shown = {"percent": -1}

    def draw(done: int, total: int) -> None:
        percent = 100 if not total else min(100, done * 100 // total)
        if percent == shown["percent"]:  # at most 101 frames, however long the file
            return
        shown["percent"] = percent
        filled = WIDTH * percent // 100
        out.write(f"\r{label:<10} [{'#' * filled}{'.' * (WIDTH - filled)}] {percent:3d}% {done}/{total}", ending="")
        out.flush()

    token = import_progress.set(draw)
    try:
        yield
    finally:
        import_progress.reset(token)
        if shown["percent"] >= 0:
            out.write("")
