#!/bin/bash
# `roofscope doctor` and `roofscope ceilings` on the GPU machine, plus torchvision's parameter
# counts beside the bundled models' (torchvision exists there, not in CI).
source tools/device/setup.sh
export ROOFSCOPE_RUNS_DIR=$OUT/runs ROOFSCOPE_CEILINGS_DIR=$OUT/ceilings
python3 -m roofscope doctor; echo "doctor rc=$?"
python3 -m roofscope doctor --format json > "$OUT/doctor.json"
time python3 -m roofscope ceilings --format json > "$OUT/ceilings.json"
python3 -m roofscope ceilings --no-save
python3 - <<'PY' | tee "$OUT/torchvision_check.txt"
import torch, torchvision.models as tv
from roofscope.profiling.zoo.registry import build_model
for name in ("resnet18", "resnet50", "mobilenet_v2", "vit_b_16", "vgg11", "vgg13", "vgg19"):
    with torch.device("meta"):
        ours = sum(p.numel() for p in build_model(name).parameters())
        theirs = sum(p.numel() for p in getattr(tv, name)().parameters())
    print(f"{name}\troofscope {ours}\ttorchvision {theirs}\t{'same' if ours == theirs else 'DIFFERENT'}")
PY
