"""Human-readable file formats of the memory store: MEMORY.md, learnings.md and USER.md."""
