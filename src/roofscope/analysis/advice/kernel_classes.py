"""Kernel classes and their fitted changes: the machinery behind the advice items that predict
a change kernel by kernel (``layout.py``: channels_last; ``tensor_math.py``: TF32;
``compiled.py``: torch.compile).

An item's model is a table of classes, each told apart by a kernel's name, its group's family
or its block shape, and a :class:`Change` per class: its time after the change is
``scale × its time before + per_launch × its launches``. A kernel of no class is taken as
unchanged. The changes are fitted by non-negative least squares (:func:`fit_scales`) on pairs
of runs of one model made by ``roofscope profile`` before and after the change, one equation
per *bucket* of each pair: a group family where the change keeps work in its family
(channels_last), the whole step where it moves work between families (TF32 runs cuDNN's 1×1
convolutions as GEMMs; Inductor fuses pooling into element-wise kernels).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

# the families of matrix work (GEMMs, convolutions, attention)
MATRIX = ("GEMM", "conv fprop", "conv dgrad", "conv wgrad", "conv FFT", "attention")


def family(group: str) -> str:
    """``GEMM (nvjet)`` -> ``GEMM``: a group's family without its library."""
    return group.split(" (")[0]


# (group, kernel name, block shape, launches, GPU time in s): a report's launches summed by
# the first three (``Report.kernel_times()``), or one launch each (``per_launch=True``)
KernelTime = tuple[str, str, str, int, float]


@dataclass(frozen=True)
class KernelClass:
    key: str
    title: str  # what its kernels are, for the item's evidence
    pattern: str | None = None  # on the kernel's name (searched)
    families: tuple[str, ...] = ()  # or every kernel of these group families
    not_pattern: str | None = None  # names the family holds but the class does not
    block: str | None = None  # on the launch's block shape, "(256, 2, 1)" (matched)
    # the change also adds time to this family for these kernels (cuDNN's NCHW-only FP32
    # convolutions get transforms around them in NHWC): fitted as a second term
    spills: str | None = None
    # fitted with a time per launch besides its scale: a floor a short kernel does not go under
    per_launch: bool = False


class ClassTable:
    """Classes in order, first match wins: the named kernels before the families that also
    hold them. Two rows may share a key: one class told apart two ways (the first row's
    title is the class's)."""

    def __init__(self, classes: Sequence[KernelClass]):
        self.classes = tuple(classes)
        self.keys = tuple(dict.fromkeys(c.key for c in self.classes))
        self.spills = {c.key: c.spills for c in self.classes if c.spills}
        self.per_launch = {c.key for c in self.classes if c.per_launch}
        self._compiled = [
            (c, *(re.compile(p) if p else None for p in (c.pattern, c.not_pattern, c.block)))
            for c in self.classes
        ]

    def title(self, key: str) -> str:
        return next(c.title for c in self.classes if c.key == key)

    def classify(self, group: str, kernel: str, block: str = "") -> str | None:
        """The class of one kernel launch, or None: unchanged."""
        fam = family(group)
        for cls, pattern, not_pattern, block_pattern in self._compiled:
            if cls.families and fam not in cls.families:
                continue
            if pattern is not None and not pattern.search(kernel):
                continue
            if not_pattern is not None and not_pattern.search(kernel):
                continue
            if block_pattern is not None and not block_pattern.fullmatch(block):
                continue
            return cls.key
        return None


@dataclass(frozen=True)
class Change:
    """A class's time after the change: ``scale`` × its time before + ``per_launch_s`` × its
    launches."""

    scale: float
    per_launch_s: float = 0.0

    def after(self, seconds: float, launches: int) -> float:
        return self.scale * seconds + self.per_launch_s * launches

    def text(self) -> str:
        per_launch = f"{self.per_launch_s * 1e6:.1f} µs a launch"
        if not self.per_launch_s:
            return f"×{self.scale:.2f}"
        return per_launch if not self.scale else f"×{self.scale:.2f} + {per_launch}"


@dataclass(frozen=True)
class Prediction:
    before: dict[str, float]  # class -> its time in the step as it is
    launches: dict[str, int]  # class -> its launches
    after: dict[str, float]  # class -> its predicted time after the change
    saved: dict[str, float]  # group -> the time predicted saved there (negative: lost)
    # why there is no prediction ("" when there is one)
    why_not: str = ""

    @property
    def gain_s(self) -> float:
        return sum(self.before.values()) - sum(self.after.values())

    def changed(self, least: float = 0.05) -> list[str]:
        """The classes whose time is predicted to change by more than ``least`` of it."""
        return [k for k, t in self.before.items() if abs(self.after[k] - t) > least * t]


NONE = Prediction({}, {}, {}, {})


def predict_classes(
    kernels: Iterable[KernelTime],
    table: ClassTable,
    changes: Mapping[str, Change],
    only: Sequence[str] | None = None,
) -> Prediction:
    """Each class's time after the change (a class without a fitted change: unchanged), and
    where the time is saved, group by group; ``only``: these classes (the others' kernels are
    taken as no class)."""
    before: dict[str, float] = {}
    launches: dict[str, int] = {}
    after: dict[str, float] = {}
    saved: dict[str, float] = {}
    for group, kernel, block, n, seconds in kernels:
        key = table.classify(group, kernel, block)
        if key is None or not seconds or (only is not None and key not in only):
            continue
        change = changes.get(key)
        then = change.after(seconds, n) if change is not None else seconds  # linear: sums
        before[key] = before.get(key, 0.0) + seconds
        launches[key] = launches.get(key, 0) + n
        after[key] = after.get(key, 0.0) + then
        saved[group] = saved.get(group, 0.0) + seconds - then
    return Prediction(before, launches, after, saved)


# -- fitting --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    """One model's step before the change and after it, launch by launch in launch order
    (``Report.kernel_times(per_launch=True)``)."""

    name: str
    before: Sequence[KernelTime]
    after: Sequence[KernelTime]

    @staticmethod
    def step(kernels: Sequence[KernelTime]) -> float:
        return sum(t for *_, t in kernels)

    @property
    def measured_gain_s(self) -> float:
        return self.step(self.before) - self.step(self.after)


def nnls(a, b):  # type: ignore[no-untyped-def]
    """Non-negative least squares by an active set: a variable that comes out negative is held
    at 0 and the rest refitted."""
    import numpy as np

    free = list(range(a.shape[1]))
    x = np.zeros(a.shape[1])
    while free:
        solved, *_ = np.linalg.lstsq(a[:, free], b, rcond=None)
        x[:] = 0.0
        x[free] = solved
        if (solved >= 0).all():
            break
        free.remove(free[int(np.argmin(solved))])
    return x


SPILL = " spilled"  # a class's second term in the fit
PER_LAUNCH = " per launch"  # and its time per launch
Bucket = Callable[[str], str]  # a group family -> the equation it is in


def whole_step(_family: str) -> str:
    """One equation per pair: for changes that move work between families."""
    return "step"


def equations(
    pair: Pair, table: ClassTable, fixed: Mapping[str, Change], bucket: Bucket = family
) -> list[tuple[dict[str, float], float]]:
    """One equation per bucket of either step: the after step's time there =
    Σ scale × the before step's class time there + the rest of its time there (the classes in
    ``fixed`` at their fitted change, the unclassed unchanged). Each equation is divided by
    the before step's time, so every model weighs the same."""
    step = pair.step(pair.before) or 1.0
    classes: dict[str, dict[str, float]] = {}
    rest: dict[str, float] = {}
    after: dict[str, float] = {}
    for group, kernel, block, n, t in pair.before:
        key, where = table.classify(group, kernel, block), bucket(family(group))
        if key is None or key in fixed:
            rest[where] = rest.get(where, 0.0) + (fixed[key].after(t, n) if key in fixed else t)
        else:
            row = classes.setdefault(where, {})
            row[key] = row.get(key, 0.0) + t
            if key in table.per_launch:
                row[key + PER_LAUNCH] = row.get(key + PER_LAUNCH, 0.0) + n
            if key in table.spills:  # its second term, in the bucket it spills into
                row = classes.setdefault(bucket(table.spills[key]), {})
                row[key + SPILL] = row.get(key + SPILL, 0.0) + t
    for group, *_, t in pair.after:
        where = bucket(family(group))
        after[where] = after.get(where, 0.0) + t
    return [
        ({k: v / step for k, v in classes.get(b, {}).items()},
         (after.get(b, 0.0) - rest.get(b, 0.0)) / step)
        for b in sorted({*classes, *rest, *after})
    ]  # fmt: skip


def fit_scales(
    pairs: Sequence[Pair],
    table: ClassTable,
    fixed: Mapping[str, Change] | None = None,
    bucket: Bucket = family,
    fixed_for: Callable[[Pair], Mapping[str, Change]] | None = None,
) -> dict[str, Change]:
    """A scale for each class with time in some pair (and not in ``fixed``), by non-negative
    least squares of every pair's :func:`equations`; ``fixed`` is returned with them, in the
    table's order. ``fixed_for`` gives a pair classes whose change is known for that pair
    alone (what Inductor did to a model's layout), taken out of its equations and not fitted."""
    import numpy as np  # the fit runs in bench/ and tests, never while a report opens

    fixed = dict(fixed or {})
    rows = [
        eq
        for pair in pairs
        for eq in equations(
            pair, table, {**fixed, **(fixed_for(pair) if fixed_for else {})}, bucket
        )
    ]
    names = [
        n
        for k in table.keys
        for n in (k, k + SPILL, k + PER_LAUNCH)
        if any(n in coeffs for coeffs, _ in rows)
    ]
    if not names:
        return {k: fixed[k] for k in table.keys if k in fixed}
    solved = dict(zip(names, nnls(
        np.array([[coeffs.get(n, 0.0) for n in names] for coeffs, _ in rows]),
        np.array([rhs for _, rhs in rows]),
    ), strict=True))  # fmt: skip
    fitted = {
        **fixed,
        **{
            k: Change(
                round(float(v + solved.get(k + SPILL, 0.0)), 3),
                round(float(solved.get(k + PER_LAUNCH, 0.0)), 9),
            )
            for k, v in solved.items()
            if not k.endswith((SPILL, PER_LAUNCH))
        },
    }
    return {k: fitted[k] for k in table.keys if k in fitted}
