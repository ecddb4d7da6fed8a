"""Every producer of advice, in one list: ``Report.advice()`` runs them all and ranks their
items together. A new source (roofscope's own rules, issue 19 item 2) is a module with a
function ``(Context) -> list[Advice]`` and one entry here."""

from __future__ import annotations

from roofscope.analysis.advice import Producer, evidence, ncu_rules
from roofscope.analysis.advice import timeline as nsys_timeline

PRODUCERS: tuple[Producer, ...] = (ncu_rules.advise, evidence.advise)

# roofscope's rules over an nsys timeline (cuda_graphs, pinned_memory, nccl_overlap)
PRODUCERS += (nsys_timeline.advise,)
