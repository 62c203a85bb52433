"""Search's supporting tables: the embedding cache, BM25 statistics and postings."""

from django.conf import settings
from django.db import models
from pgvector.django import VectorField

from memories.models.choices import (
    SearchCorpus,
)


class EmbeddingCache(models.Model):
    """One owner's embedding of one text under one model, keyed by the hash of the three."""

    key = models.CharField(max_length=64, primary_key=True)
    # Scoped by owner so that no owner can tell what another has embedded (memories/services/embeddings.py).
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=200)
    vector = VectorField(dimensions=settings.EMBEDDING_DIM)
    created_at = models.DateTimeField(auto_now_add=True)


class SearchStats(models.Model):
    """An owner's BM25 collection statistics for memories or turns, as of the last refresh."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    corpus = models.CharField(max_length=10, choices=SearchCorpus.choices)
    documents = models.PositiveIntegerField()
    average_length = models.FloatField()
    refreshed_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "corpus"], name="searchstats_unique")]


class LexemeFrequency(models.Model):
    """How many of an owner's memories (or turns) contain a lexeme, as of the last statistics refresh."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False)
    corpus = models.CharField(max_length=10, choices=SearchCorpus.choices)
    lexeme = models.TextField()
    documents = models.PositiveIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "corpus", "lexeme"], name="lexemefrequency_unique")]


class SearchPosting(models.Model):
    """One lexeme of one searchable memory or turn: the inverted index BM25 reads, kept by triggers.

    Database triggers (migration 0005) write a row per lexeme when a memory or turn is stored, and
    rewrite them when its text changes or a memory enters or leaves the searchable statuses
    (active, archived); nothing in Python writes here. Search scores BM25 from an index-only scan
    of these rows instead of reading every matching memory's tsvector from the heap.
    """

    pk = models.CompositePrimaryKey("corpus", "document_id", "lexeme")
    corpus = models.CharField(max_length=10, choices=SearchCorpus.choices)
    document_id = models.UUIDField()
    lexeme = models.TextField()
    # The triggers keep these rows; deleting an owner deletes their memories and turns, which
    # deletes these through the same triggers.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.DO_NOTHING, db_constraint=False, db_index=False, related_name="+"
    )
    frequency = models.PositiveSmallIntegerField()
    document_length = models.PositiveIntegerField()

    class Meta:
        indexes = [
            models.Index(
                name="posting_owner_lexeme",
                fields=["owner", "corpus", "lexeme"],
                include=["document_id", "frequency", "document_length"],
            )
        ]
