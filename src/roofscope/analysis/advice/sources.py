"""Every producer of advice, in one list: ``Report.advice()`` runs them all and ranks their
items together. A new source (roofscope's own rules, issue 19 item 2) is a module with a
function ``(Context) -> list[Advice]`` and one entry here."""

from __future__ import annotations

from roofscope.analysis.advice import Producer, evidence, ncu_rules
from roofscope.analysis.advice import timeline as nsys_timeline
from roofscope.analysis.advice.grid import advise as launch_grid
from roofscope.analysis.advice.memory import advise as batch_memory
from roofscope.analysis.advice.model_flops import advise as model_flops
from roofscope.analysis.advice.recording import advise as input_pipeline

PRODUCERS: tuple[Producer, ...] = (
    ncu_rules.advise,  # ncu's own rules, rolled up over the report
    evidence.advise,  # channels_last, tensor_cores, fusion
    launch_grid,
    model_flops,
    batch_memory,  # the largest batch that fits, from the run's files beside the export
    nsys_timeline.advise,  # cuda_graphs, pinned_memory, nccl_overlap
    input_pipeline,  # recordings
)
