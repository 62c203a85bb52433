"""Plain-text tables for the management commands' results on stdout."""

# A memory's text in a table row is cut to this many characters.
CONTENT_WIDTH = 60


def clip(value, width: int) -> str:
    """`value` on one line, cut to `width` characters with an ellipsis."""
    text = " ".join(str("" if value is None else value).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def render_table(headers: list[str], rows: list[list], *, widths: dict[int, int] | None = None) -> str:
    """Aligned columns under a header rule; column i is clipped to widths[i] when given."""
    widths = widths or {}
    cells = [[clip(c, widths.get(i, 10_000)) for i, c in enumerate(row)] for row in rows]
    sizes = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(sizes[i]) for i, h in enumerate(headers)).rstrip()]
    lines.append("  ".join("-" * s for s in sizes))
    lines += ["  ".join(c.ljust(sizes[i]) for i, c in enumerate(row)).rstrip() for row in cells]
    return "\n".join(lines)
