"""Full-text columns shared by memories and turns.

The embedded PostgreSQL ships no pg_trgm, so CJK text is indexed as character n-grams computed in
Python (`memory_project.text.cjk_ngrams`) and stored beside the content; the generated tsvector combines
English stemming of the content with those n-grams; search reads it through the postings that
database triggers derive from it (memories.SearchPosting, migration memories 0005).
"""

from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from pgvector.django import HnswIndex


def search_vector_field(*english_fields: str) -> models.GeneratedField:
    expression = SearchVector(*english_fields, config="english") + SearchVector("search_ngrams", config="simple")
    return models.GeneratedField(expression=expression, output_field=SearchVectorField(), db_persist=True)


def embedding_index(name: str) -> HnswIndex:
    """The HNSW index on an `embedding` column, for cosine distance; memories and turns share its
    build parameters so that their searches trade recall for speed alike."""
    return HnswIndex(name=name, fields=["embedding"], m=16, ef_construction=64, opclasses=["vector_cosine_ops"])
