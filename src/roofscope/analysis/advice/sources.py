"""Every producer of advice, in one list: ``Report.advice()`` runs them all and ranks their
items together. A new source (roofscope's own rules, issue 19 item 2) is a module with a
function ``(Context) -> list[Advice]`` and one entry here."""

from __future__ import annotations

from roofscope.analysis.advice import Producer, evidence, ncu_rules
from roofscope.analysis.advice.grid import advise as launch_grid
from roofscope.analysis.advice.model_flops import advise as model_flops
from roofscope.analysis.advice.recording import advise as input_pipeline

PRODUCERS: tuple[Producer, ...] = (
    ncu_rules.advise,
    evidence.advise,
    launch_grid,
    model_flops,
    input_pipeline,
)
