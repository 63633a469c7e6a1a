"""Broken copies of the gke-llm example stack, the mistakes users make with LLMInferenceServices:
each a text edit of `stacks/Pulumi.gke-llm.yaml`, written with the stack program into a throwaway
project that `gpu-inference preview` runs.

- `worker_without_toleration`: qwen-72b's worker pods placed by themselves on the H100 nodes
  without the pool's `dedicated=llm` toleration (the LeaderWorkerSet `qwen-72b-kserve-mn`'s
  workers stay Pending);
- `tensor_3_on_32_heads` / `tensor_3_on_32_heads_unnamed`: llama-3.1-8b (32 attention heads) at
  tensor parallelism 3, with its `model` row named (the config refuses it) or only its URI;
- `llama_70b_on_one_l4`: llama-3.1-70b on one L4 (24 GB) of an added L4 pool.
"""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STACK = "gke-llm"


def _edit(text: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def worker_without_toleration(text: str) -> str:
    return _edit(
        text,
        (
            "        worker: {}",
            "        worker:\n          placement: {nodeSelector: {gpu-inference.dev/pool: h100}}\n"
            "        #",
        ),
    )


def _llama_8b(text: str, *, named: bool) -> str:
    return _edit(
        text,
        ("hf://meta-llama/Llama-3.1-70B-Instruct\n", "hf://meta-llama/Llama-3.1-8B-Instruct\n"),
        (
            "      model: llama-3.1-70b ",
            "      model: llama-3.1-8b " if named else "      # model: llama-3.1-70b ",
        ),
        ("        gpus: 4\n        tensor: 4\n", "        gpus: 3\n        tensor: 3\n"),
    )


def tensor_3_on_32_heads(text: str) -> str:
    return _llama_8b(text, named=True)


def tensor_3_on_32_heads_unnamed(text: str) -> str:
    return _llama_8b(text, named=False)


def llama_70b_on_one_l4(text: str) -> str:
    l4_pool = (
        "    - name: l4\n"
        "      machineType: g2-standard-8\n"
        "      accelerator: nvidia-l4\n"
        "      gpusPerNode: 1\n"
        "      minNodes: 0\n"
        "      maxNodes: 2\n"
        "      nodeLocations: [us-central1-a]\n"
    )
    service = (
        "    - name: llama-70b-l4\n"
        "      modelUri: hf://meta-llama/Llama-3.1-70B-Instruct\n"
        "      model: llama-3.1-70b\n"
        "      decode: {pool: l4, gpus: 1, tensor: 1}\n"
        "      router:\n"
        "        scheduler: {pool: router}\n"
    )
    text = _edit(
        text,
        ("    # The endpoint-picker schedulers", l4_pool + "    # The endpoint-picker schedulers"),
    )
    return text.rstrip("\n") + "\n" + service


def project(tmp_path: Path, edit) -> Path:
    """A throwaway project whose gke-llm stack is `edit` of the example's text."""
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "stacks").mkdir()
    text = edit((ROOT / "stacks" / f"Pulumi.{STACK}.yaml").read_text())
    (tmp_path / "stacks" / f"Pulumi.{STACK}.yaml").write_text(text)
    return tmp_path
