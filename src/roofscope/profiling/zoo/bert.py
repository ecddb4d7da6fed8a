"""A BERT-base-sized encoder (12 layers, 768 wide, 12 heads, 3072 MLP, 30,522-token vocabulary)
with a pooler and a two-class head, built from torch.nn like the A100 lab study's BERT."""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from roofscope.profiling.catalog import MAX_POSITIONS

VOCAB = 30522


class SelfAttention(nn.Module):
    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.output = nn.Linear(hidden, hidden)

    def forward(self, x: Tensor) -> Tensor:
        b, n, d = x.shape

        def split(t: Tensor) -> Tensor:
            return t.view(b, n, self.heads, d // self.heads).transpose(1, 2)

        y = F.scaled_dot_product_attention(split(self.query(x)), split(self.key(x)),
                                           split(self.value(x)))  # fmt: skip
        return self.output(y.transpose(1, 2).reshape(b, n, d))


class Layer(nn.Module):
    def __init__(self, hidden: int, heads: int, mlp: int):
        super().__init__()
        self.attention = SelfAttention(hidden, heads)
        self.ln_1 = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, mlp)
        self.out = nn.Linear(mlp, hidden)
        self.ln_2 = nn.LayerNorm(hidden, eps=1e-12)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x: Tensor) -> Tensor:  # post-norm, as BERT
        x = self.ln_1(x + self.dropout(self.attention(x)))
        return self.ln_2(x + self.dropout(self.out(F.gelu(self.intermediate(x)))))


class BertEncoder(nn.Module):
    def __init__(self, layers: int = 12, hidden: int = 768, heads: int = 12, mlp: int = 3072):
        super().__init__()
        self.words = nn.Embedding(VOCAB, hidden)
        self.positions = nn.Embedding(MAX_POSITIONS, hidden)
        self.token_types = nn.Embedding(2, hidden)
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        self.dropout = nn.Dropout(0.1)
        self.layers = nn.Sequential(*(Layer(hidden, heads, mlp) for _ in range(layers)))
        self.pooler = nn.Linear(hidden, hidden)
        self.classifier = nn.Linear(hidden, 2)

    def forward(self, ids: Tensor) -> Tensor:
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = self.words(ids) + self.positions(positions) + self.token_types(torch.zeros_like(ids))
        x = self.layers(self.dropout(self.ln(x)))
        return self.classifier(torch.tanh(self.pooler(x[:, 0])))
