"""One training step of a torchvision model between cudaProfilerStart/Stop.

Usage: python3 step.py MODEL BATCH [fp32|bf16]. Forward, backward and an SGD step on random
224×224 inputs, after one warm-up step, as in shared/samples/h100/README.md; bf16 runs the
forward pass under torch.autocast.
"""

import sys

import torch
import torchvision

name, batch = sys.argv[1], int(sys.argv[2])
precision = sys.argv[3] if len(sys.argv) > 3 else "fp32"
model = getattr(torchvision.models, name)(num_classes=1000).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(batch, 3, 224, 224, device="cuda")
y = torch.randint(0, 1000, (batch,), device="cuda")
loss_fn = torch.nn.CrossEntropyLoss()


def step() -> None:
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16"):
        loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()


step()
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
step()
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
print(f"{name} batch={batch} {precision} step done")
