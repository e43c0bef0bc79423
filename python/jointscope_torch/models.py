"""Small reference models for tests and examples (plain torch.nn, torch 1.13 compatible).

Every constructor takes `device` so that production-size models can be built on the `meta` device
without allocating their weights.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, dim=16, hidden=64, device=None):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden, device=device)
        self.fc2 = nn.Linear(hidden, dim, device=device)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads, device=None):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, device=device)
        self.proj = nn.Linear(dim, dim, device=device)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(c // self.heads))
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        return self.proj(y)


class GPTBlock(nn.Module):
    """Pre-norm transformer block: layer norm, causal attention, layer norm, GELU MLP."""

    def __init__(self, dim=32, heads=4, device=None):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim, device=device)
        self.attn = CausalSelfAttention(dim, heads, device=device)
        self.ln2 = nn.LayerNorm(dim, device=device)
        self.mlp = MLP(dim, 4 * dim, device=device)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class ConvNet(nn.Module):
    """Conv + batch norm + ReLU, twice, then pooling and a linear head."""

    def __init__(self, channels=8, classes=10, device=None):
        super().__init__()
        self.conv1 = nn.Conv2d(3, channels, 3, padding=1, device=device)
        self.bn1 = nn.BatchNorm2d(channels, device=device)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, device=device)
        self.bn2 = nn.BatchNorm2d(channels, device=device)
        self.head = nn.Linear(channels, classes, device=device)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        return self.head(x.mean(dim=(2, 3)))


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5, device=None):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim, device=device))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class LlamaLayer(nn.Module):
    """LLaMA-style decoder layer: RMSNorm, causal attention without biases, RMSNorm, SwiGLU MLP."""

    def __init__(self, dim, heads, hidden, device=None):
        super().__init__()
        self.heads = heads
        self.attention_norm = RMSNorm(dim, device=device)
        self.wq = nn.Linear(dim, dim, bias=False, device=device)
        self.wk = nn.Linear(dim, dim, bias=False, device=device)
        self.wv = nn.Linear(dim, dim, bias=False, device=device)
        self.wo = nn.Linear(dim, dim, bias=False, device=device)
        self.ffn_norm = RMSNorm(dim, device=device)
        self.w1 = nn.Linear(dim, hidden, bias=False, device=device)
        self.w2 = nn.Linear(hidden, dim, bias=False, device=device)
        self.w3 = nn.Linear(dim, hidden, bias=False, device=device)

    def forward(self, x):
        b, t, c = x.shape
        h = self.attention_norm(x)
        q = self.wq(h).view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = self.wk(h).view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = self.wv(h).view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(c // self.heads)
        mask = torch.full((t, t), float("-inf"), device=x.device).triu(1)
        att = (att + mask).softmax(dim=-1)
        x = x + self.wo((att @ v).transpose(1, 2).reshape(b, t, c))
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class LlamaStack(nn.Module):
    """`layers` LLaMA-style layers; LlamaStack(4096, 32, 11008, 2, device="meta") has LLaMA-7B layer shapes."""

    def __init__(self, dim=4096, heads=32, hidden=11008, layers=2, device=None):
        super().__init__()
        self.layers = nn.ModuleList([LlamaLayer(dim, heads, hidden, device=device) for _ in range(layers)])
        self.norm = RMSNorm(dim, device=device)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class GPTStack(nn.Module):
    """`layers` GPT blocks and a final layer norm; gpt_stack(layers=48) gives the benchmark graph (7,645 nodes)."""

    def __init__(self, dim=32, heads=4, layers=12, device=None):
        super().__init__()
        self.blocks = nn.ModuleList([GPTBlock(dim, heads, device=device) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim, device=device)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.ln_f(x)


class TinyLM(nn.Module):
    """A language model with its loss: token + position embeddings, dropout, GPT blocks, tied-free head,
    cross-entropy. forward(tokens, targets) returns the scalar loss."""

    def __init__(self, vocab=64, dim=32, heads=4, layers=2, context=16, dropout=0.1, device=None):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim, device=device)
        self.pos = nn.Embedding(context, dim, device=device)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList([GPTBlock(dim, heads, device=device) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim, device=device)
        self.head = nn.Linear(dim, vocab, bias=False, device=device)

    def forward(self, tokens, targets):
        t = tokens.shape[1]
        positions = torch.arange(t, device=tokens.device)
        x = self.drop(self.tok(tokens) + self.pos(positions))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


def gpt_stack(layers=48, dim=32, heads=4, batch=2, seq=16, seed=0, device=None):
    """The benchmark model and its example input: (GPTStack, (x,)). With the defaults, export_joint in torch 1.13
    writes a joint graph of 7,645 nodes (159 per layer + 13; 1,921 for 12 layers): the ~7.4k-node graph of the
    partition benchmarks. Small dims keep capture fast (~5 s for 48 layers on CPU); the partitioner works on the
    graph, not on the arithmetic."""
    torch.manual_seed(seed)
    model = GPTStack(dim, heads, layers, device=device)
    x = torch.randn(batch, seq, dim, device=device, requires_grad=True)
    return model, (x,)


def oracle_models():
    """The models the partition oracle test exports live: name -> (module, example args). Small shapes, fixed
    seed, CPU."""
    torch.manual_seed(0)
    tokens = torch.randint(0, 64, (2, 16))
    targets = torch.randint(0, 64, (2, 16))
    return {
        "mlp": (MLP(16, 64), (torch.randn(4, 16, requires_grad=True),)),
        "gpt_block": (GPTBlock(32, 4), (torch.randn(2, 16, 32, requires_grad=True),)),
        "convnet_bn": (ConvNet(8, 10), (torch.randn(2, 3, 8, 8, requires_grad=True),)),
        "llama_rmsnorm_swiglu": (LlamaStack(32, 4, 64, 2), (torch.randn(2, 16, 32, requires_grad=True),)),
        "lm_embedding_dropout_ce": (TinyLM(), (tokens, targets)),
        "gpt_12_layers": gpt_stack(layers=12, seed=1),
    }
