"""Processing of ExtractionJobs (filled in by the engine)."""
