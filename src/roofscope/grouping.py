"""Kernel name → group, by ordered regex rules (DESIGN.md §5).

The first matching rule wins: the project's ``roofscope.toml`` first, then the user config, then
the built-in rules below. Names no rule matches are grouped by their base name (template
arguments, parameter lists and return type stripped), so 60 launches of one templated kernel
become one row. Rules run over the distinct names only (thousands at most), never per launch.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from roofscope.errors import RoofscopeError
from roofscope.regex import MAX_PATTERN_CHARS, check_regex, first_match
from roofscope.tomlfile import check_keys, read_toml, text_value

if TYPE_CHECKING:
    import duckdb

# Grouping axes: name rules (every report), or the NVTX range a kernel was launched in.
AXES = {"rules": None, "nvtx-inner": "innermost", "nvtx-outer": "outermost"}


@dataclass(frozen=True)
class Rule:
    pattern: str
    group: str
    origin: str = "built-in"

    def check(self) -> None:
        """Raise RoofscopeError naming the rule's origin when RE2 cannot run the pattern."""
        check_regex(self.pattern, self.origin)


# Built-in rules, first match wins; matched case-insensitively anywhere in the demangled name.
# Order matters where names carry more than one family's words:
#  - attention before convolution: cuDNN's SDPA kernels say "fprop"/"bprop"
#    (cudnn_generated_fort_native_sdpa_sm90_flash_fprop_...), FlashAttention's say "flash_fwd";
#  - Inductor/Triton names (triton_{poi,per,red,tem,for}_fused_<aten ops>_<n>) before the generic
#    word rules: their op words ("transpose", "clone", "sum", "native_dropout") would otherwise
#    scatter one compiled step over dozens of groups or the wrong ones;
#  - convolution before GEMM: implicit-GEMM convolutions say "gemm" too;
#  - specific families (loss, RNG, embedding, optimizer, NCCL, cub) before "reduction" and
#    "element-wise", whose words (reduce, elementwise) they contain.
# docs/decisions.md ("Built-in grouping for today's stacks") gives the reasons; the table test
# tests/test_grouping_table.py holds the real names each rule was written against.
_TRITON = r"^triton_[a-z]+_fused"  # Inductor kernel names: triton_<kind>_fused_<aten ops>_<n>
BUILTIN_RULES: tuple[Rule, ...] = tuple(
    Rule(p, g)
    for p, g in (
        # attention: cuDNN SDPA (flash fprop/bprop and its dot(dO,O) / dQ-convert helpers, in
        # cuDNN 9.19 under fusion::),
        # FlashAttention 2/3 (flash_fwd*, flash_bwd*, pytorch_flash::), FlashInfer, fmha
        # (PyTorch memory-efficient attention fmha_cutlass{F,B}, TensorRT), xformers,
        # Inductor's flex_attention templates
        (
            r"flash|fmha|sdpa|attention|mha_|xformers|(?:cudnn|fusion)::compute_dot_do_o"
            r"|(?:cudnn|fusion)::convert_dq|unpack_cudnn",
            "attention",
        ),
        # Inductor templates: matmul templates are GEMMs, convolution templates convolutions
        (r"^triton_tem_fused\w*_convolution", "conv fprop"),
        (r"^triton_tem_fused\w*(mm|addmm|bmm|_scaled_mm)", "GEMM"),
        # Inductor fused kernels, by the aten op words in the name (loss, norms, softmax,
        # embedding first: they define the kernel; dropout and casts ride along)
        (rf"{_TRITON}\w*(nll_loss|cross_entropy|mse_loss|binary_cross_entropy)", "loss"),
        (rf"{_TRITON}\w*batch_norm", "batch norm"),
        (rf"{_TRITON}\w*(layer_norm|rms_norm|group_norm)", "layer norm"),
        (rf"{_TRITON}\w*softmax", "softmax"),
        (rf"{_TRITON}\w*embedding", "embedding"),
        # a persistent/looped reduction kernel (sum, mean, amax, var...) with no op word above
        (r"^triton_(per|red)_fused", "reduction"),
        (rf"{_TRITON}\w*(native_dropout|rand|bernoulli)", "dropout/RNG"),
        (r"^triton_(poi|for)_fused", "element-wise"),
        # convolution (cuDNN xmma/cutlass implicit GEMM, precompiled engines, ATen depthwise;
        # cuDNN 9's runtime-compiled NHWC kernels: conv2d_c1_k1_nhwc_specialized, and its
        # dgrad2d_/wgrad2d_ kin, which the two rules before it take)
        # cuDNN's FFT convolutions (any direction: the name does not say which), its DSE
        # engine's and the legacy engine's fft2d_r2c/c2r (whose arguments name a
        # cudnn::reduced_divisor, before "reduction")
        (
            r"\bDSE::\w*fft|\bvector_fft<|pointwise_mult_and_sum_complex|\bfft2d_(?:r2c|c2r)_",
            "conv FFT",
        ),
        (r"wgrad|Conv2dWgrad|conv_depthwise2d_grad_weight", "conv wgrad"),
        (r"dgrad|Conv2dDgrad|conv_depthwise2d_backward", "conv dgrad"),
        (
            r"fprop|implicit_convolve|conv_depthwise2d_forward|Conv2dFprop|ImplicitGemmConvolution"
            r"|winograd|cudnn::.*conv|convolve|conv[123]d_c\d+_k\d+"
            # cuDNN's precomputed-index implicit GEMM (a forward-only algorithm) and its masks
            r"|conv2d_precomputed|compute_valid_masks_kernel",
            "conv fprop",
        ),
        # GEMM: cuBLAS/cuBLASLt (sm*_xmma_gemm, nvjet, splitKreduce, epilogues, gemv), CUTLASS 2
        # and 3 (cutlass_80_*, cutlass3x_sm90/sm100, device_kernel<...GemmUniversal>)
        (
            r"gemm|gemv|nvjet|cutlass|cublas|xmma_gemm|splitKreduce|dot_kernel|sgemm|hgemm",
            "GEMM",
        ),
        # communication: NCCL collectives and send/recv (ncclDevKernel_*, ncclKernel_*)
        (r"nccl", "NCCL"),
        # fused and foreach optimizers (ATen multi_tensor_apply, FusedAdam/SGD, apex)
        (
            r"multi_tensor_apply|multi_tensor_(adam|lamb|sgd)|fused_?(adam|sgd|lamb)|lamb_",
            "optimizer",
        ),
        # loss: ATen nll_loss (the second half of cross entropy), other losses
        (
            r"nll_loss|cross_entropy|mse_loss|mse_backward|mse_kernel|smooth_l1|kl_div",
            "loss",
        ),
        # embedding: ATen embedding forward/backward and EmbeddingBag, with the segment kernels
        # of EmbeddingBackwardKernel.cu
        (
            r"embedding|EmbeddingBag|compute_grad_weight|krn_partials_per_segment"
            r"|krn_partial_segment_offset|compute_num_of_partial_segments|sum_and_scatter",
            "embedding",
        ),
        # dropout and random numbers: ATen fused_dropout / masked_scale (its backward),
        # distribution kernels (rand, randn, randint, normal_), philox, cuRAND
        (r"dropout|masked_scale|distribution_|philox|curand|bernoulli|randperm", "dropout/RNG"),
        (r"bn_fw|bn_bw|batch_?norm", "batch norm"),
        # layer norm forward, its input and gamma/beta backward
        (r"layer_?norm|rms_?norm|group_?norm|GammaBetaBackward", "layer norm"),
        (r"softmax", "softmax"),
        # max/average pooling, and ATen's adaptive average pooling (its backward's name has no
        # "pool": atomic_adaptive_average_gradinput)
        (r"pool|adaptive_av(era)?g", "pooling"),
        # layout changes: cuDNN/TensorRT NCHW<->NHWC and reformat kernels, cuDNN's NHWC channel
        # padding (nhwcAddPaddingKernel, before "reduction": its arguments name a reduce), its
        # filter flip for a convolution's backward (flip_filter),
        # cuTENSOR permutations, cuDNN's folded NHWC (nchwToFoldedNhwcKernel) and generic
        # transforms (tensorTransformGeneric)
        (
            r"nchwTo\w*Nhwc|nhwcTo\w*Nchw|nchw2nhwc|nhwc2nchw|AddPadding|transpose|permut"
            r"|flip_filter|genericReformat|tensorTransform",
            "layout transform",
        ),
        # cub device-wide algorithms (cub::Device*, also in at_cuda_detail:: and un-namespaced
        # as ncu prints them), by the op: sort, scan, select/unique, histogram, reduce
        (r"Device(Segmented)?(RadixSort|MergeSort|Sort)\w*Kernel|bitonicSort|radixSortKV", "sort"),
        (r"DeviceScan\w*Kernel|tensor_kernel_scan", "scan"),
        (r"Device(Select|Compact|UniqueByKey|RunLengthEncode)\w*Kernel", "select/unique"),
        (r"DeviceHistogram\w*Kernel", "histogram"),
        # sparse products (cuSPARSE, DGL's SpMM/SDDMM), before "reduction": their names carry
        # the reduce operator (reduce::Sum)
        (r"cusparse|SpMM|SDDMM|csrmm|csrmv", "sparse"),
        # copies and fills: ATen's torch.cat (CatArrayBatchedCopy*), cuDNN's workspace set-up
        # before a convolution whose name does not say which (the fprop/dgrad/wgrad ones went
        # to their convolution above)
        (r"memcpy|memset|direct_copy|init_device_workspace|CatArrayBatchedCopy", "memcpy/memset"),
        (r"reduce|reduction", "reduction"),
        # cuDNN's scaling of a tensor in place (scalePackedTensor_kernel: a convolution's beta)
        (r"elementwise|FillFunctor|scalePackedTensor", "element-wise"),
    )
)

# Checked by the suite (tests/test_grouping.py), not at every start: checking a pattern compiles
# it in Python and asks DuckDB (~2 ms each, ~70 ms for the built-ins with DuckDB's start).
_CHECKED = frozenset(BUILTIN_RULES)

_BRACKETS = re.compile(r"<[^<>]*>|\([^()]*\)|\[[^\[\]]*\]")
_BRACKET_CHARS = re.compile(r"[<>()\[\]]")
_OPENS = {"<": ">", "(": ")", "[": "]"}
# Passes of _BRACKETS over a name that is not well nested (``operator<``, a stray ``>``): one
# pass per level of nesting, so a cap keeps the work linear in the name; real names nest a
# dozen levels at most.
MAX_BRACKET_PASSES = 64


def _outside_brackets(text: str) -> str | None:
    """``text`` without its bracketed parts, in one pass over its bracket characters; None
    when the brackets are not well nested (a closer that is not the innermost open one's, or
    one left open). For a well-nested name this is what removing innermost pairs until none
    is left gives, without a pass per level of nesting (which made a 1 MB ``f<f<…>>`` name
    quadratic: issue 30)."""
    kept: list[str] = []
    stack: list[str] = []
    start = 0  # where the text outside every bracket resumes
    for hit in _BRACKET_CHARS.finditer(text):
        char, at = hit.group(), hit.start()
        if char in _OPENS:
            if not stack:
                kept.append(text[start:at])
            stack.append(_OPENS[char])
        elif not stack or stack.pop() != char:
            return None
        elif not stack:
            start = at + 1
    if stack:
        return None
    kept.append(text[start:])
    return "".join(kept)


def base_name(kernel: str) -> str:
    """``void at::native::f<4, X>(int, T2)`` -> ``at::native::f``.

    Linear in the name's length: well-nested brackets are removed in one pass; others (an
    ``operator<``, a ``->``) by removing innermost pairs at most ``MAX_BRACKET_PASSES`` times.
    """
    text = kernel.strip()
    outside = _outside_brackets(text)
    if outside is None:
        previous = None
        for _ in range(MAX_BRACKET_PASSES):
            if previous == text:
                break
            previous = text
            text = _BRACKETS.sub("", text)
        outside = text
    tokens = outside.split()
    return tokens[-1] if tokens else kernel.strip() or "(unnamed)"


class Grouper:
    """Ordered rules, checked once; a name's group is the first match or its base name.

    Matching runs in RE2 (``roofscope.regex``), so a user's pattern cannot hang the UI. Rules
    equal to a built-in one (pattern, group and origin) are known good and not checked again.
    """

    def __init__(self, rules: Iterable[Rule]):
        self.rules = list(rules)
        for rule in self.rules:
            if rule not in _CHECKED:
                rule.check()

    def match_all(
        self, kernels: Sequence[str], con: duckdb.DuckDBPyConnection | None = None
    ) -> list[tuple[str, str]]:
        """(group, the rule that decided it) for each name, in one pass over all of them;
        ``con``: a connection to match on (the session's), rather than the regex module's
        own, which costs a DuckDB database the first time."""
        hits = first_match([r.pattern for r in self.rules], kernels, con=con)
        out = []
        for kernel, hit in zip(kernels, hits, strict=True):
            if hit is None:
                out.append((base_name(kernel), "base name"))
            else:
                rule = self.rules[hit]
                out.append((rule.group, f"{rule.origin}: /{rule.pattern}/"))
        return out

    def match(self, kernel: str) -> tuple[str, str]:
        return self.match_all([kernel])[0]

    def group(self, kernel: str) -> str:
        return self.match(kernel)[0]


def user_config_path() -> Path:
    root = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(root) / "roofscope" / "config.toml"


RULES_HINT = "see docs/guide/grouping.md"
_EXAMPLE = 'e.g. [[groups]] pattern = "my_gemm" name = "GEMM"'


def rules_from_toml(path: Path) -> list[Rule]:
    """``[[groups]]`` tables with ``pattern`` and ``name`` keys, in file order. A key the file
    may not have, a value that is not a string or a pattern over :data:`MAX_PATTERN_CHARS` is
    refused in one line naming the file (``tomlfile`` limits its size and nesting)."""
    data = read_toml(path, "rules file", RULES_HINT)
    check_keys(data, ("groups",), "the file", path, RULES_HINT)
    rules = []
    entries = data.get("groups", [])
    if not isinstance(entries, list):
        raise RoofscopeError(
            "groups must be an array of [[groups]] tables", path=str(path), hint=_EXAMPLE
        )
    for i, entry in enumerate(entries):
        where = f"[[groups]] entry {i + 1}"
        if isinstance(entry, dict):
            check_keys(entry, ("pattern", "name"), where, path, RULES_HINT)
        if not isinstance(entry, dict) or "pattern" not in entry or "name" not in entry:
            raise RoofscopeError(
                f"{where} needs 'pattern' and 'name'",
                path=str(path),
                hint='e.g. pattern = "my_gemm" name = "GEMM"',
            )
        pattern = text_value(entry, "pattern", where, path, RULES_HINT)
        name = text_value(entry, "name", where, path, RULES_HINT)
        if len(pattern) > MAX_PATTERN_CHARS:
            raise RoofscopeError(
                f"{where}: pattern of {len(pattern):,} characters is longer than the "
                f"{MAX_PATTERN_CHARS:,} a rule may be",
                path=str(path),
                hint="match a distinctive part of the kernel name, not all of it",
            )
        rule = Rule(pattern, name, str(path))
        rule.check()
        rules.append(rule)
    return rules


def config_files(project_dir: Path | None = None) -> list[Path]:
    """The rules files that apply from ``project_dir`` (the working directory): its
    ``roofscope.toml``, then the user's config, those that exist, as absolute paths."""
    project = (project_dir or Path.cwd()) / "roofscope.toml"
    return [p.absolute() for p in (project, user_config_path()) if p.is_file()]


def default_rules(project_dir: Path | None = None) -> list[Rule]:
    """Project rules, then user rules, then the built-ins."""
    return rules_from_files(config_files(project_dir))


def rules_from_files(paths: Iterable[Path]) -> list[Rule]:
    """The rules of each file, in order, then the built-ins."""
    rules = [rule for path in paths for rule in rules_from_toml(path)]
    return [*rules, *BUILTIN_RULES]


def save_rule(path: Path, rule: Rule) -> None:
    """Append one rule to a ``roofscope.toml`` (the TUI's rule editor writes through this)."""
    Rule(rule.pattern, rule.group, str(path)).check()
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    block = f"\n[[groups]]\npattern = {_toml_str(rule.pattern)}\nname = {_toml_str(rule.group)}\n"
    path.write_text(existing.rstrip("\n") + ("\n" if existing else "") + block, encoding="utf-8")


def _toml_str(text: str) -> str:
    """A TOML literal string when possible (regexes keep their backslashes), else basic."""
    if "'" not in text and "\n" not in text:
        return "'" + text + "'"
    return json.dumps(text)
