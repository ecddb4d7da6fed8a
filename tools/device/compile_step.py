# The workload behind tests/data/device/torch_compile_encoder_h100.ncu-raw.csv.gz (issue 18):
# a torch.compile'd and an eager training step of a two-layer TransformerEncoder (embedding,
# pre-norm, dropout, bf16 autocast, cross entropy, fused AdamW), SDPA forward+backward under each
# backend (cuDNN, flash, memory-efficient, math), a max-autotune matmul+layer_norm+softmax
# (triton_tem_*), torch._grouped_mm (CUTLASS 3), an fp8 _scaled_mm, RNG, sort, cumsum, unique
# and EmbeddingBag. Two warm-up rounds, then one round between cudaProfilerStart/Stop.
# Formatted by ruff since it ran (it was written tersely to fit one device command); run
# on an H100 with PyTorch 2.11:
#   ncu --profile-from-start off --metrics gpu__time_duration.sum -f -o rep python3 compile_step.py
#   ncu -i rep.ncu-rep --csv --page raw > torch_compile_encoder_h100.ncu-raw.csv
# tools/kernel_names.py lists its kernel names.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend as B
from torch.nn.attention import sdpa_kernel

d = "cuda"
torch.manual_seed(0)


class M(nn.Module):
    def __init__(s):
        super().__init__()
        s.e = nn.Embedding(1000, 256)
        s.t = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(256, 4, 1024, 0.1, batch_first=True, norm_first=True),
            2,
            enable_nested_tensor=False,
        )
        s.h = nn.Linear(256, 1000)

    def forward(s, x):
        return s.h(s.t(s.e(x)))


m = M().to(d)
opt = torch.optim.AdamW(m.parameters(), fused=True)
cm = torch.compile(m)
x = torch.randint(0, 1000, (8, 128), device=d)


def step(f):
    with torch.autocast(d, torch.bfloat16):
        loss = F.cross_entropy(f(x).flatten(0, 1).float(), x.flatten())
    loss.backward()
    opt.step()
    opt.zero_grad()


q, k, v = (
    torch.randn(4, 8, 256, 64, device=d, dtype=torch.bfloat16, requires_grad=True) for _ in range(3)
)


def att():
    for b in (B.CUDNN_ATTENTION, B.FLASH_ATTENTION, B.EFFICIENT_ATTENTION, B.MATH):
        try:
            with sdpa_kernel(b):
                F.scaled_dot_product_attention(q, k, v, is_causal=True).sum().backward()
        except Exception as e:
            print("sdpa", b, e)


@torch.compile(mode="max-autotune-no-cudagraphs")
def tem(a, b, c):
    return F.layer_norm(torch.relu(a @ b) + c, (512,)).softmax(-1).sum(0)


A = torch.randn(512, 512, device=d, dtype=torch.bfloat16)
Bm = torch.randn(512, 512, device=d, dtype=torch.bfloat16)


def extra():
    tem(A, Bm, A)
    try:
        w = torch.randn(4, 512, 512, device=d, dtype=torch.bfloat16).transpose(-2, -1)
        o = torch.tensor([128, 256, 384, 512], device=d, dtype=torch.int32)
        torch._grouped_mm(A, w, offs=o)
    except Exception as e:
        print("gmm", e)
    try:
        f8 = torch.float8_e4m3fn
        s = torch.tensor(1.0, device=d)
        torch._scaled_mm(A.to(f8), Bm.t().contiguous().t().to(f8), s, s, out_dtype=torch.bfloat16)
    except Exception as e:
        print("f8", e)
    torch.randn(1000, device=d)
    torch.rand(1000, device=d)
    F.dropout(A, 0.1)
    torch.sort(torch.randn(10000, device=d))
    torch.cumsum(x, 1)
    torch.unique(x)
    ee = nn.EmbeddingBag(100, 16).to(d)
    ee(x[:, :4] % 100).sum().backward()


for _ in range(2):
    step(cm)
    step(m)
    att()
    extra()
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
step(cm)
step(m)
att()
extra()
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
print("ok")
