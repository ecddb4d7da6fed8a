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

from roofscope.errors import RoofscopeError
from roofscope.regex import check_regex, first_match
from roofscope.tomlfile import read_toml


@dataclass(frozen=True)
class Rule:
    pattern: str
    group: str
    origin: str = "built-in"

    def check(self) -> None:
        """Raise RoofscopeError naming the rule's origin when RE2 cannot run the pattern."""
        check_regex(self.pattern, self.origin)


BUILTIN_RULES: tuple[Rule, ...] = tuple(
    Rule(p, g)
    for p, g in (
        (r"wgrad|Conv2dWgrad|conv_depthwise2d_grad_weight", "conv wgrad"),
        (r"dgrad|Conv2dDgrad|conv_depthwise2d_backward", "conv dgrad"),
        (
            r"fprop|implicit_convolve|conv_depthwise2d_forward|Conv2dFprop|ImplicitGemmConvolution"
            r"|winograd|cudnn::.*conv|convolve",
            "conv fprop",
        ),
        (r"flash|fmha|sdpa|attention|mha_", "attention"),
        (r"gemm|gemv|nvjet|cutlass|xmma_gemm|splitKreduce|dot_kernel|sgemm|hgemm", "GEMM"),
        (r"bn_fw|bn_bw|batch_?norm", "batch norm"),
        (r"layer_?norm|rms_?norm|group_?norm", "layer norm"),
        (r"softmax", "softmax"),
        (r"pool", "pooling"),
        (r"nchwToNhwc|nhwcToNchw|nchw2nhwc|nhwc2nchw|transpose|permute", "layout transform"),
        (r"multi_tensor_apply|adam|sgd|lamb_", "optimizer"),
        (r"nccl", "NCCL"),
        (r"memcpy|memset|direct_copy", "memcpy/memset"),
        (r"reduce|reduction", "reduction"),
        (r"elementwise|FillFunctor|fused_dropout|distribution_", "element-wise"),
    )
)

_BRACKETS = re.compile(r"<[^<>]*>|\([^()]*\)|\[[^\[\]]*\]")


def base_name(kernel: str) -> str:
    """``void at::native::f<4, X>(int, T2)`` -> ``at::native::f``."""
    text = kernel.strip()
    previous = None
    while previous != text:
        previous = text
        text = _BRACKETS.sub("", text)
    tokens = text.split()
    return tokens[-1] if tokens else kernel.strip() or "(unnamed)"


class Grouper:
    """Ordered rules, checked once; a name's group is the first match or its base name.

    Matching runs in RE2 (``roofscope.regex``), so a user's pattern cannot hang the UI.
    """

    def __init__(self, rules: Iterable[Rule]):
        self.rules = list(rules)
        for rule in self.rules:
            rule.check()

    def match_all(self, kernels: Sequence[str]) -> list[tuple[str, str]]:
        """(group, the rule that decided it) for each name, in one pass over all of them."""
        hits = first_match([r.pattern for r in self.rules], kernels)
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


def rules_from_toml(path: Path) -> list[Rule]:
    """``[[groups]]`` tables with ``pattern`` and ``name`` keys, in file order."""
    data = read_toml(path, "rules file", "see the README section on grouping rules")
    rules = []
    entries = data.get("groups", [])
    if not isinstance(entries, list):
        raise RoofscopeError(
            "groups must be an array of [[groups]] tables",
            path=str(path),
            hint='e.g. [[groups]] pattern = "my_gemm" name = "GEMM"',
        )
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or "pattern" not in entry or "name" not in entry:
            raise RoofscopeError(
                f"[[groups]] entry {i + 1} needs 'pattern' and 'name'",
                path=str(path),
                hint='e.g. pattern = "my_gemm" name = "GEMM"',
            )
        rule = Rule(str(entry["pattern"]), str(entry["name"]), str(path))
        rule.check()
        rules.append(rule)
    return rules


def default_rules(project_dir: Path | None = None) -> list[Rule]:
    """Project rules, then user rules, then the built-ins."""
    rules: list[Rule] = []
    project = (project_dir or Path.cwd()) / "roofscope.toml"
    for path in (project, user_config_path()):
        if path.is_file():
            rules.extend(rules_from_toml(path))
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
