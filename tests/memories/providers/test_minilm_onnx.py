"""The local model on ONNX Runtime gives the vectors the PyTorch model gives (stored ones stay valid)."""

import logging
from collections import Counter

import numpy as np
import onnx
import pytest

from memories.providers.embeddings import LocalEmbedder, get_embedder
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

    # when it embeds the texts in one call (grouped by length, each group padded), and one at a time
    batch = np.asarray(onnx.embed(TEXTS))
    alone = np.asarray([onnx.embed([text])[0] for text in TEXTS])

    # then both are unit vectors of 384 dimensions pointing where PyTorch's do
    assert onnx.runtime == "onnx"
    assert batch.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    assert (batch * torch_vectors).sum(axis=1).min() > 0.99999
    assert (alone * torch_vectors).sum(axis=1).min() > 0.99999


def test_the_graphs_are_made_once_into_the_model_folder(tmp_path, settings):
    # given an empty model folder
    settings.EMBEDDING_MODEL_DIR = tmp_path / "models"

    # when the int8 graph is asked for twice, then the float32 one
    first = onnx_model_ensure("int8")
    made_at = first.stat().st_mtime_ns
    second = onnx_model_ensure("int8")
    float32 = onnx_model_ensure("float32")

    # then the float32 graph was exported (and checked) once, the int8 one quantized from it once,
    # under the names of these weights and recipes, leaving nothing partial
    assert first == second == onnx_model_path("int8")
    assert float32 == onnx_model_path("float32") == onnx_model_path()
    assert first.name == float32.name.removesuffix(".onnx") + "-int8q1.onnx"
    assert first.parent == tmp_path / "models"
    assert second.stat().st_mtime_ns == made_at
    assert sorted(p.name for p in first.parent.iterdir()) == sorted(
        [first.name, float32.name, first.with_suffix(".lock").name, float32.with_suffix(".lock").name]
    )
    # and of the float32 graph's 48 matrix products, the 36 by a weight matrix are now in 8-bit
    # integers, the 12 of two activations (attention) still in float32
    ops = Counter(node.op_type for node in onnx.load(str(first)).graph.node)
    assert (ops["MatMulInteger"], ops["MatMul"]) == (36, 12)
    assert Counter(node.op_type for node in onnx.load(str(float32)).graph.node)["MatMul"] == 48


def test_an_unknown_precision_is_refused(tmp_path, settings):
    # given an empty model folder
    settings.EMBEDDING_MODEL_DIR = tmp_path / "models"

    # when a precision that does not exist is asked for, then it is refused and nothing is made
    with pytest.raises(ValueError, match="unknown precision 'int4'"):
        onnx_model_ensure("int4")
    assert not (tmp_path / "models").exists()


def test_int8_vectors_point_where_the_float32_ones_do_under_their_own_name():
    # given the local model on ONNX in both precisions
    int8, float32 = LocalEmbedder("onnx", "int8"), LocalEmbedder("onnx", "float32")

    # when both embed the same texts
    quantized = np.asarray(int8.embed(TEXTS))
    reference = np.asarray(float32.embed(TEXTS))

    # then the int8 vectors are unit vectors close to (not equal to) the float32 ones, and their cache
    # entries are kept apart by the model name
    assert quantized.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(quantized, axis=1), 1.0, atol=1e-5)
    cosines = (quantized * reference).sum(axis=1)
    assert cosines.min() > 0.95
    assert cosines.max() < 0.99999
    assert (int8.name, float32.name) == ("all-MiniLM-L6-v2-int8", "all-MiniLM-L6-v2")
    assert LocalEmbedder("torch", "int8").name == "all-MiniLM-L6-v2"


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


def test_search_queries_are_embedded_in_int8_and_everything_stored_in_float32(settings):
    # given the local provider with its defaults
    settings.EMBEDDING_PROVIDER = "local"

    # when the embedders for stored vectors and for queries are asked for
    stored, query = get_embedder(), get_embedder(query=True)

    # then stored vectors keep the float32 model (vectors already stored stay valid) and queries use int8
    assert (stored.runtime, stored.precision, stored.name) == ("onnx", "float32", "all-MiniLM-L6-v2")
    assert (query.runtime, query.precision, query.name) == ("onnx", "int8", "all-MiniLM-L6-v2-int8")

    # and with EMBEDDING_QUERY_PRECISION=float32 both are the one float32 embedder
    settings.EMBEDDING_QUERY_PRECISION = "float32"
    assert get_embedder(query=True) is get_embedder()
