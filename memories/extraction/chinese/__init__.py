"""Chinese patterns of the offline extractor: `sentences` reads a sentence, the other modules hold the
rules for one kind of statement each."""
