"""The file prefilter: could any Python rule fire in this text? Run on every file, so it imports
nothing heavy (a file that fails it costs a read and this search, and no parser is imported)."""

from __future__ import annotations

import re

from portlint.wordsearch import WordSet

#: Words at least one of which a file must contain for any Python rule to fire.
CANDIDATE_WORDS = (
    "cuda",
    "nccl",
    "cudnn",
    "nvcc",
    "cupy",
    "apex",
    "xformers",
    "bitsandbytes",
    "tensorrt",
    "cudf",
    "cuml",
    "cugraph",
    "nvml",
    "NVML",
    "NCCL",
    "CUBLAS",
    "NVIDIA_",
    "NVTE_",
    "transformer_engine",
    "flashinfer",
    "flash_attn_interface",
    "sageattention",
    "q8_kernels",
    "fbgemm_gpu",
    "exllamav2",
    "mamba_ssm",
    "nvfuser",
    "ProfilerActivity",
    "GradScaler",
    "trtexec",
    "trtllm",
    "inline_asm_elementwise",
)
#: Words common in code that no rule matches (``is_flash_attn_available()``, docstrings about
#: "CUDA", model ids such as "nvidia/mit-b0"): they count only in the shape a rule looks for.
#: Each pattern starts with its word, so the regex engine skips ahead to it.
CANDIDATE_CONTEXTS = {
    # the module name in an import, not part of a longer name
    "flash_attn": re.compile(r"flash_attn(?!\w)(?<!\wflash_attn)"),
    # the Marlin kernels' module (``import marlin``), not a longer name such as marlin_utils
    "marlin": re.compile(r"marlin(?!\w)(?<!\wmarlin)"),
    # the causal-conv1d kernels' module, not a longer name such as causal_conv1d_ref
    "causal_conv1d": re.compile(r"causal_conv1d(?!\w)(?<!\wcausal_conv1d)"),
    # DeepSpeed-MII's module (``from mii import pipeline``), not a longer name
    "mii": re.compile(r"mii(?!\w)(?<!\wmii)"),
    # the environment variables (CUDA_VISIBLE_DEVICES, PYTORCH_CUDA_ALLOC_CONF) and CUDAExtension
    # and the "CUDA" profiler activity (activities=["CPU", "CUDA"])
    "CUDA": re.compile(r"CUDA(?:_|Extension|[\"'])"),
    # nvidia.dali, nvidia_smi, the nvidia-smi tool, ``from nvidia import dali``
    "nvidia": re.compile(r"nvidia(?:[._-]|\s+import)"),
    # architecture names compared against (PRT602), not names such as sm_scale
    "sm_": re.compile(r"sm_\d"),
    # torch.utils.cpp_extension.load(sources=["kernel.cu"]) (PRT502)
    "cpp_extension": re.compile(r"cpp_extension"),
}


#: Where the searches start (``portlint.wordsearch``): "u" for the ``cu...`` words and
#: causal_conv1d, "x" for apex, xformers, exllamav2, cpp_extension and trtexec, "n" for the
#: ``nv...`` words, nccl, tensorrt, flash..., bitsandbytes, transformer_engine, sageattention,
#: q8_kernels and marlin, "A" and "L" for the upper-case words, "m" for sm_, mii, fbgemm_gpu,
#: mamba_ssm and trtllm (TensorRT-LLM's tools), "G" for
#: GradScaler (a grad scaler given no device takes "cuda"), "T" for NVTE_ (Transformer Engine's
#: variables): eight passes over the text where starting from each word's first letter takes
#: sixteen.
ANCHORS = "uxnALmGT"

#: The words and contexts, found in one pass (``portlint.wordsearch``); its expressions, from the
#: anchors, are the exact fallback.
WORDS = WordSet(CANDIDATE_WORDS, CANDIDATE_CONTEXTS, ANCHORS)


def is_candidate(text: str) -> bool:
    """Cheap test run on every file: could any Python rule fire here?"""
    return WORDS.holds_any(text)
