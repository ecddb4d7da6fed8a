"""ViT-B/16 as torchvision builds it (pre-norm encoder blocks, class token, learned positions)."""

from __future__ import annotations

import torch
from torch import Tensor, nn


class EncoderBlock(nn.Module):
    def __init__(self, hidden: int, heads: int, mlp: int):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden, eps=1e-6)
        self.self_attention = nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.ln_2 = nn.LayerNorm(hidden, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(hidden, mlp), nn.GELU(), nn.Linear(mlp, hidden))

    def forward(self, x: Tensor) -> Tensor:
        y = self.ln_1(x)
        x = x + self.self_attention(y, y, y, need_weights=False)[0]
        return x + self.mlp(self.ln_2(x))


class VisionTransformer(nn.Module):
    def __init__(
        self,
        image_size: int = 224,
        patch: int = 16,
        layers: int = 12,
        heads: int = 12,
        hidden: int = 768,
        mlp: int = 3072,
        classes: int = 1000,
    ):
        super().__init__()
        self.conv_proj = nn.Conv2d(3, hidden, patch, patch)
        tokens = (image_size // patch) ** 2 + 1
        self.class_token = nn.Parameter(torch.zeros(1, 1, hidden))
        self.pos_embedding = nn.Parameter(torch.empty(1, tokens, hidden).normal_(std=0.02))
        self.blocks = nn.Sequential(*(EncoderBlock(hidden, heads, mlp) for _ in range(layers)))
        self.ln = nn.LayerNorm(hidden, eps=1e-6)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x: Tensor) -> Tensor:
        x = self.conv_proj(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.class_token.expand(x.shape[0], -1, -1), x], dim=1)
        x = self.ln(self.blocks(x + self.pos_embedding))
        return self.head(x[:, 0])


def vit_b_16(image_size: int = 224) -> VisionTransformer:
    return VisionTransformer(image_size=image_size)
