"""The local model on ONNX Runtime gives the vectors the PyTorch model gives (stored ones stay valid)."""

import logging

import numpy as np
import pytest

from memories.providers.embeddings import LocalEmbedder
from memories.providers.minilm_onnx import onnx_model_ensure, onnx_model_path

pytestmark = pytest.mark.slow

TEXTS = [
    "",
    "what does Alice like to drink in the morning",
    "Priya prefers oat milk latte in the morning and avoids cilantro.",
    "Caroline: I went to the LGBTQ support group yesterday.\nMelanie: That sounds great!",
    "我喜欢在周末去爬山，然后喝一杯咖啡。",
    "Decided to move Atlas from Redis to Kafka because latency was too high. " * 30,  # past 256 tokens
]


@pytest.fixture(scope="module")
def torch_vectors():
    return np.asarray(LocalEmbedder("torch").embed(TEXTS))


def test_onnx_vectors_agree_with_pytorch_ones_alone_and_in_a_mixed_batch(torch_vectors):
    # given the ONNX build of the packaged model
    onnx = LocalEmbedder("onnx")

    # when it embeds the texts all in one batch (padded to the longest), and one at a time
    batch = np.asarray(onnx.embed(TEXTS))
    alone = np.asarray([onnx.embed([text])[0] for text in TEXTS])

    # then both are unit vectors of 384 dimensions pointing where PyTorch's do
    assert onnx.runtime == "onnx"
    assert batch.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    assert (batch * torch_vectors).sum(axis=1).min() > 0.99999
    assert (alone * torch_vectors).sum(axis=1).min() > 0.99999


def test_the_graph_is_exported_once_into_the_model_folder(tmp_path, settings):
    # given an empty model folder
    settings.EMBEDDING_MODEL_DIR = tmp_path / "models"

    # when the graph is asked for twice
    first = onnx_model_ensure()
    made_at = first.stat().st_mtime_ns
    second = onnx_model_ensure()

    # then it was exported (and checked) once, under the name of these weights, leaving nothing partial
    assert first == second == onnx_model_path()
    assert first.parent == tmp_path / "models"
    assert second.stat().st_mtime_ns == made_at
    assert sorted(p.suffix for p in first.parent.iterdir()) == [".lock", ".onnx"]


def test_without_a_usable_graph_the_pytorch_model_embeds_and_the_log_says_so(tmp_path, settings, caplog, torch_vectors):
    # given a model folder that cannot be created (a file is in the way)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    settings.EMBEDDING_MODEL_DIR = blocker / "models"

    # when the local embedder is used
    embedder = LocalEmbedder("onnx")
    with caplog.at_level(logging.ERROR, logger="memories.providers.embeddings"):
        vectors = np.asarray(embedder.embed(TEXTS[:3]))

    # then PyTorch gave the same vectors, and the fallback was logged
    assert embedder.runtime == "torch"
    assert np.allclose(vectors, torch_vectors[:3], atol=1e-5)
    assert "ONNX build of all-MiniLM-L6-v2 is unavailable" in caplog.text
