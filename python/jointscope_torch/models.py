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

    def heads_of(self, x):
        """q, k and v of x, each (batch, heads, tokens, head dim)."""
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        return [z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v)]

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.heads_of(x)
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
        # In the scores' dtype: a float32 mask would promote bf16 scores, and the bmm after would mix dtypes.
        mask = torch.full((t, t), float("-inf"), device=x.device, dtype=att.dtype).triu(1)
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


# ---------------------------------------------------------------------------------------------------------------
# torch 2 model zoo: the cases the torch 2 partition oracle exports through torch.compile (tests/python/
# test_torch2_oracle.py, python -m jointscope_torch.zoo). Class definitions only use torch 1.13 APIs at definition
# time; torch-2-only APIs (scaled_dot_product_attention, checkpoint policies, nested_compile_region, functional
# collectives) are reached only when a torch 2 case is built or run.


class SDPAAttention(CausalSelfAttention):
    """Causal self-attention through F.scaled_dot_product_attention (torch >= 2.0)."""

    def __init__(self, dim, heads, dropout=0.0, device=None):
        super().__init__(dim, heads, device=device)
        self.dropout = dropout

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.heads_of(x)
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, c))


class GPTBlockSDPA(nn.Module):
    """Pre-norm GPT block with scaled_dot_product_attention; `dropout` after the attention and the MLP."""

    def __init__(self, dim=32, heads=4, dropout=0.0, device=None):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim, device=device)
        self.attn = SDPAAttention(dim, heads, device=device)
        self.ln2 = nn.LayerNorm(dim, device=device)
        self.mlp = MLP(dim, 4 * dim, device=device)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        x = x + self.drop(self.attn(self.ln1(x)))
        return x + self.drop(self.mlp(self.ln2(x)))


class GPT2LM(nn.Module):
    """GPT-2-small's shapes for one block: token and position embeddings (vocabulary 50257), a GPT block, the final
    layer norm and an untied LM head, cross-entropy over every position. The 50257-wide head is what inductor's
    pad_mm pads on a GPU (device_log_zoo.py); too large for the CPU zoo."""

    def __init__(self, vocab=50257, dim=768, heads=12, context=1024, device=None):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim, device=device)
        self.wpe = nn.Embedding(context, dim, device=device)
        self.block = GPTBlockSDPA(dim, heads, device=device)
        self.ln = nn.LayerNorm(dim, device=device)
        self.head = nn.Linear(dim, vocab, bias=False, device=device)

    def forward(self, idx, targets):
        pos = torch.arange(idx.shape[1], device=idx.device)
        logits = self.head(self.ln(self.block(self.wte(idx) + self.wpe(pos))))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


class CheckpointedStack(nn.Module):
    """`blocks` run one after the other, each under torch.utils.checkpoint (non-reentrant); `context_fn` (a
    zero-argument factory of (forward, recompute) contexts, e.g. selective checkpointing) applies to every block.
    checkpoint=False runs the blocks plainly."""

    def __init__(self, blocks, norm=None, checkpoint=True, context_fn=None):
        super().__init__()
        self.blocks = nn.ModuleList(blocks)
        self.norm = norm
        self.checkpoint = checkpoint
        self.context_fn = context_fn

    def forward(self, x):
        from torch.utils.checkpoint import checkpoint

        for block in self.blocks:
            if not self.checkpoint:
                x = block(x)
            elif self.context_fn is not None:
                x = checkpoint(block, x, use_reentrant=False, context_fn=self.context_fn)
            else:
                x = checkpoint(block, x, use_reentrant=False)
        return self.norm(x) if self.norm is not None else x


def rope_tables(head_dim, seq, theta=500000.0, device=None):
    """LLaMA-3 rotary tables (cos, sin), each (seq, head_dim), in the rotate-half layout."""
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=device).float() / head_dim))
    freqs = torch.outer(torch.arange(seq, device=device).float(), inv)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()


def apply_rope(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


class Llama3Block(nn.Module):
    """LLaMA-3-style decoder block: RMSNorm, grouped-query attention (kv_heads < heads) with rotary embeddings and
    scaled_dot_product_attention, RMSNorm, SwiGLU MLP; no biases."""

    def __init__(self, dim=32, heads=4, kv_heads=2, hidden=64, max_seq=64, device=None):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.attention_norm = RMSNorm(dim, device=device)
        self.wq = nn.Linear(dim, heads * self.head_dim, bias=False, device=device)
        self.wk = nn.Linear(dim, kv_heads * self.head_dim, bias=False, device=device)
        self.wv = nn.Linear(dim, kv_heads * self.head_dim, bias=False, device=device)
        self.wo = nn.Linear(heads * self.head_dim, dim, bias=False, device=device)
        self.ffn_norm = RMSNorm(dim, device=device)
        self.w1 = nn.Linear(dim, hidden, bias=False, device=device)
        self.w2 = nn.Linear(hidden, dim, bias=False, device=device)
        self.w3 = nn.Linear(dim, hidden, bias=False, device=device)
        cos, sin = rope_tables(self.head_dim, max_seq, device=device)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)

    def forward(self, x):
        b, t, _ = x.shape
        h = self.attention_norm(x)
        q = self.wq(h).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.wk(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        cos, sin = self.rope_cos[:t], self.rope_sin[:t]
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        repeat = self.heads // self.kv_heads
        k = k.repeat_interleave(repeat, dim=1)
        v = v.repeat_interleave(repeat, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.wo(y.transpose(1, 2).reshape(b, t, self.heads * self.head_dim))
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class MoELayer(nn.Module):
    """Token-choice mixture of experts: softmax router, top-k experts per token (weights renormalized), SwiGLU
    experts applied per (token, choice) with gathered expert weights, outputs combined with index_add; also returns
    the load-balancing loss computed from the scattered gates. Static shapes (no data-dependent sizes)."""

    def __init__(self, dim=16, hidden=32, experts=4, top_k=2, device=None):
        super().__init__()
        self.top_k, self.experts = top_k, experts
        self.router = nn.Linear(dim, experts, bias=False, device=device)
        self.w1 = nn.Parameter(torch.randn(experts, dim, hidden, device=device) * dim ** -0.5)
        self.w3 = nn.Parameter(torch.randn(experts, dim, hidden, device=device) * dim ** -0.5)
        self.w2 = nn.Parameter(torch.randn(experts, hidden, dim, device=device) * hidden ** -0.5)

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        tokens = x.shape[0]
        probs = self.router(x).softmax(dim=-1)
        top_w, top_i = probs.topk(self.top_k, dim=-1)
        top_w = top_w / top_w.sum(dim=-1, keepdim=True)
        expert = top_i.reshape(-1)
        token = torch.arange(tokens, device=x.device).repeat_interleave(self.top_k)
        xin = x[token].unsqueeze(1)
        h = F.silu(torch.bmm(xin, self.w1[expert])) * torch.bmm(xin, self.w3[expert])
        y = torch.bmm(h, self.w2[expert]).squeeze(1) * top_w.reshape(-1, 1)
        out = torch.zeros_like(x).index_add(0, token, y)
        gates = torch.zeros_like(probs).scatter(1, top_i, top_w)
        aux = (gates.mean(dim=0) * probs.mean(dim=0)).sum() * self.experts
        return (x + out).reshape(shape), aux


class SizeOutput(nn.Module):
    """Returns (tensor, its first dimension): with a dynamic dim the forward's own outputs hold a SymInt."""

    def __init__(self, dim=16, device=None):
        super().__init__()
        self.fc = nn.Linear(dim, dim, device=device)

    def forward(self, x):
        y = self.fc(x).relu()
        return y, y.shape[0]


class NestedRegionMLP(nn.Module):
    """MLP layers whose body is one torch.compiler.nested_compile_region (invoke_subgraph HOP): the body is traced
    once and called per layer."""

    def __init__(self, dim=16, hidden=32, layers=3, device=None):
        super().__init__()
        self.layers = nn.ModuleList([MLP(dim, hidden, device=device) for _ in range(layers)])
        # made outside the compiled code (dynamo does not trace nested_compile_region itself); torch >= 2.8
        self._region = torch.compiler.nested_compile_region(NestedRegionMLP.body)

    @staticmethod
    def body(x, w1, b1, w2, b2):
        return x + F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2)

    def forward(self, x):
        for layer in self.layers:
            x = self._region(x, layer.fc1.weight, layer.fc1.bias, layer.fc2.weight, layer.fc2.bias)
        return x


class NestedRegionCheckpointedDropout(nn.Module):
    """NestedRegionMLP with the body's MLP under torch.utils.checkpoint and dropout (p=0.1) after it: the body's
    partition recomputes the dropout, and on the CPU its forward returns the RNG state (run_and_save_rng_state)
    that the outer graph hands to the body's backward beside the saved values."""

    def __init__(self, dim=16, hidden=32, layers=3, device=None):
        super().__init__()
        self.layers = nn.ModuleList([MLP(dim, hidden, device=device) for _ in range(layers)])
        self._region = torch.compiler.nested_compile_region(NestedRegionCheckpointedDropout.body)

    @staticmethod
    def inner(x, w1, b1, w2, b2):
        return x + F.dropout(F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2), 0.1, True)

    @staticmethod
    def body(x, w1, b1, w2, b2):
        from torch.utils.checkpoint import checkpoint

        return checkpoint(NestedRegionCheckpointedDropout.inner, x, w1, b1, w2, b2, use_reentrant=False)

    def forward(self, x):
        for layer in self.layers:
            x = self._region(x, layer.fc1.weight, layer.fc1.bias, layer.fc2.weight, layer.fc2.bias)
        return x


class CheckpointedMaskedAttention(nn.Module):
    """Pre-norm attention with an additive mask and dropout_p under torch.utils.checkpoint. Compiled with
    dynamic=True, guards specialize the model dim and the mask's head dim (Sym(32), Sym(4) inputs), and torch
    saves those inputs for the backward because the inputs' unreplaced strides still name them."""

    def __init__(self, dim=32, heads=4, p=0.1, device=None):
        super().__init__()
        self.heads, self.p = heads, p
        self.ln = nn.LayerNorm(dim, device=device)
        self.qkv = nn.Linear(dim, 3 * dim, device=device)
        self.proj = nn.Linear(dim, dim, device=device)

    def attention(self, x, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=self.p)
        return x + self.proj(a.transpose(1, 2).reshape(b, t, d))

    def forward(self, x, mask):
        from torch.utils.checkpoint import checkpoint

        return checkpoint(self.attention, x, mask, use_reentrant=False).pow(2).mean()


class LiteralNoOps(nn.Module):
    """Arithmetic with literal identities, as models write it: integer position buckets plus 0 (T5's relative
    attention), x * 1, x / 1.0, x - 0, an integer tensor times 1.0 (a no-op up to its dtype), one inside a
    checkpointed region."""

    def __init__(self, dim=16, device=None):
        super().__init__()
        self.fc = nn.Linear(dim, dim, device=device)
        self.bias = nn.Embedding(2 * dim, 1, device=device)

    def region(self, h):
        return torch.tanh(h * 1) - 0

    def forward(self, x):
        from torch.utils.checkpoint import checkpoint

        t = x.shape[1]
        pos = torch.arange(t, device=x.device)
        buckets = (pos[None, :] - pos[:, None]) + 0 + t
        scale = (pos * 1.0).mean() + 1
        h = self.fc(x) / 1.0 + self.bias(buckets).squeeze(-1).sum(0) / scale
        return checkpoint(self.region, h, use_reentrant=False)


class RenormedEmbedding(nn.Module):
    """nn.Embedding(max_norm=1.0) renormalizes its weight in place while the forward reads it: the weight is an
    input that requires grad and whose mutation the runtime epilogue applies after the forward
    (aot_runtime_epilogue_input_mutation), so torch may not save it for the backward."""

    def __init__(self, vocab=40, dim=16, device=None):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim, max_norm=1.0, device=device)
        self.fc = nn.Linear(dim, dim, device=device)

    def forward(self, idx):
        h = self.embedding(idx)
        return (h @ self.embedding.weight[: h.shape[-1]].t()).tanh().sum() + self.fc(h).sum()


class AutocastDropoutMLP(nn.Module):
    """An MLP with dropout under CPU autocast to bfloat16: dropout draws bfloat16 noise, which inductor's
    replace_random draws as float32 and converts."""

    def __init__(self, dim=16, hidden=32, p=0.1, device=None):
        super().__init__()
        self.mlp = MLP(dim, hidden, device=device)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return self.drop(self.mlp(x)).float()


class FloatAttributeNorm(nn.Module):
    """A linear, an RMS norm with eps and a scale held as Python floats: under torch.compile(dynamic=True) dynamo
    lifts the floats as inputs (SymFloat), and AOTAutograd's tensorify_python_scalars turns them into float64
    tensors before partitioning."""

    def __init__(self, dim=16, device=None):
        super().__init__()
        self.fc = nn.Linear(dim, dim, device=device)
        self.eps = 1e-6
        self.scale = 0.7

    def forward(self, x):
        h = self.fc(x)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return (h * self.scale).tanh()


class DynamicLMLoss(nn.Module):
    """An embedding, a GELU-tanh MLP whose constant reads math.pi, an LM head over the last `keep` positions (0:
    all) and a shifted cross-entropy that ignores padding: under torch.compile(dynamic=True) math.pi and `keep`
    are symbols. The passes then meet a float expression of a symbol (sqrt(2 / pi)), a slice_scatter whose sizes
    only a guard makes equal, and a scatter upon a full of symbolic shape (transformers' GPT-2 loss, smaller)."""

    def __init__(self, vocab=48, dim=16, device=None):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, device=device)
        self.up = nn.Linear(dim, 2 * dim, device=device)
        self.down = nn.Linear(2 * dim, dim, device=device)
        self.head = nn.Linear(dim, vocab, bias=False, device=device)

    def forward(self, ids, labels, keep: int):
        h = self.embed(ids)
        u = self.up(h)
        u = 0.5 * u * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (u + 0.044715 * torch.pow(u, 3.0))))
        h = h + self.down(u)
        logits = self.head(h[:, -keep:, :]).float()
        labels = F.pad(labels, (0, 1), value=-100)[:, 1:]
        return F.cross_entropy(logits.view(-1, logits.size(-1)), labels.reshape(-1), ignore_index=-100)


class FusedQKVBlock(nn.Module):
    """Falcon's attention (transformers' new decoder architecture, smaller): one fused qkv projection viewed as
    (kv groups, heads per group + 2, head dim), the key and value taken with list indices qkv[:, :, :, [-2]] and
    [-1], which AOTAutograd makes one-element tensor constants; then SDPA and a GELU MLP."""

    def __init__(self, dim=32, heads=4, kv=2, device=None):
        super().__init__()
        self.heads, self.kv, self.hd = heads, kv, dim // heads
        self.ln = nn.LayerNorm(dim, device=device)
        self.qkv = nn.Linear(dim, (heads + 2 * kv) * self.hd, bias=False, device=device)
        self.out = nn.Linear(dim, dim, bias=False, device=device)
        self.mlp = MLP(dim, 2 * dim, device=device)

    def forward(self, x):
        b, t, d = x.shape
        qkv = self.qkv(self.ln(x)).view(b, t, self.kv, self.heads // self.kv + 2, self.hd)
        q = qkv[:, :, :, :-2]
        k = torch.broadcast_to(qkv[:, :, :, [-2]], q.shape)
        v = torch.broadcast_to(qkv[:, :, :, [-1]], q.shape)
        q, k, v = [y.flatten(2, 3).transpose(1, 2) for y in (q, k, v)]
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
        x = x + self.out(a)
        return x + self.mlp(x)


class EmbeddedCheckpointedStack(nn.Module):
    """An input projection and layer norm outside any checkpoint (transformers' layernorm_embedding), then
    blocks each under torch.utils.checkpoint: the norm's gradient comes after the regions' in the backward."""

    def __init__(self, blocks, dim=32, device=None):
        super().__init__()
        self.proj = nn.Linear(dim, dim, device=device)
        self.ln = nn.LayerNorm(dim, device=device)
        self.stack = CheckpointedStack(blocks)

    def forward(self, x):
        return self.stack(self.ln(self.proj(x)))


class LoRAMLP(nn.Module):
    """PEFT's LoRA on a pre-norm MLP: frozen base weights and a frozen norm (requires_grad=False), trainable
    low-rank A and B after dropout on the input."""

    class Linear(nn.Module):
        def __init__(self, dim, out, rank=4, alpha=8.0, device=None):
            super().__init__()
            self.base = nn.Linear(dim, out, device=device).requires_grad_(False)
            self.a = nn.Parameter(torch.randn(rank, dim, device=device) / math.sqrt(dim))
            self.b = nn.Parameter(torch.full((out, rank), 0.01, device=device))
            self.scale = alpha / rank
            self.drop = nn.Dropout(0.05)

        def forward(self, x):
            return self.base(x) + (self.drop(x) @ self.a.t() @ self.b.t()) * self.scale

    def __init__(self, dim=32, hidden=64, device=None):
        super().__init__()
        self.norm = nn.LayerNorm(dim, device=device).requires_grad_(False)
        self.up = LoRAMLP.Linear(dim, hidden, device=device)
        self.down = LoRAMLP.Linear(hidden, dim, device=device)

    def forward(self, x):
        return x + self.down(F.silu(self.up(self.norm(x))))


class ComplexRoPEAttention(nn.Module):
    """LLaMA-1's rotary embedding through complex numbers (view_as_complex(x) * freqs_cis, view_as_real): complex64
    values in the joint graph."""

    def __init__(self, dim=32, heads=4, seq=16, device=None):
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False, device=device)
        self.o = nn.Linear(dim, dim, bias=False, device=device)
        freqs = 1.0 / (10000 ** (torch.arange(0, self.hd, 2, device=device).float() / self.hd))
        angles = torch.outer(torch.arange(seq, device=device).float(), freqs)
        self.register_buffer("freqs_cis", torch.polar(torch.ones_like(angles), angles), persistent=False)

    def rope(self, x):
        xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(xc * self.freqs_cis[None, :, None, :]).flatten(3).type_as(x)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.hd).unbind(2)
        q, k = self.rope(q), self.rope(k)
        y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        return x + self.o(y.transpose(1, 2).reshape(b, t, d))


class UNetResBlock(nn.Module):
    """A diffusion UNet's res block: GroupNorm, SiLU, conv, the time embedding added, dropout, conv, skip; then a
    nearest upsample and an average pool."""

    def __init__(self, ch=16, tdim=32, device=None):
        super().__init__()
        self.n1, self.n2 = nn.GroupNorm(4, ch, device=device), nn.GroupNorm(4, ch, device=device)
        self.c1 = nn.Conv2d(ch, ch, 3, padding=1, device=device)
        self.c2 = nn.Conv2d(ch, ch, 3, padding=1, device=device)
        self.t = nn.Linear(tdim, ch, device=device)
        self.drop = nn.Dropout(0.1)

    def forward(self, x, temb):
        h = self.c1(F.silu(self.n1(x))) + self.t(F.silu(temb))[:, :, None, None]
        h = self.c2(self.drop(F.silu(self.n2(h))))
        return F.avg_pool2d(F.interpolate(x + h, scale_factor=2, mode="nearest"), 2)


class DistilledLM(nn.Module):
    """An LM with its head tied to the embedding, trained with label smoothing, a KL term towards a detached
    teacher softmax(logits * 0.5) and a z-loss: inductor rewrites the scaled softmax (mul_softmax_pattern)."""

    def __init__(self, vocab=64, dim=32, device=None):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, device=device)
        self.mix = nn.Linear(dim, dim, device=device)
        self.ln = nn.LayerNorm(dim, device=device)

    def forward(self, ids, targets):
        logits = self.ln(F.gelu(self.mix(self.emb(ids)))) @ self.emb.weight.t()
        ce = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), label_smoothing=0.1)
        with torch.no_grad():
            teacher = F.softmax(logits.detach() * 0.5, -1)
        kl = F.kl_div(F.log_softmax(logits, -1), teacher, reduction="batchmean")
        return ce + kl + torch.logsumexp(logits, -1).pow(2).mean() * 1e-4


class ContrastiveCLIP(nn.Module):
    """CLIP's loss: normalized embeddings, image @ text^T * logit_scale.exp(), symmetric cross-entropy, and a
    log_softmax at a temperature: the softmax patterns with a tensor scale and a division."""

    def __init__(self, dim=16, emb=8, device=None):
        super().__init__()
        self.img = nn.Linear(dim, emb, device=device)
        self.txt = nn.Linear(dim, emb, device=device)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07), device=device))
        self.temperature = 2.0

    def forward(self, a, b):
        # transformers' CLIPModel: logits_per_text = text @ image^T * logit_scale.exp()
        logits = (F.normalize(self.img(a), dim=-1) @ F.normalize(self.txt(b), dim=-1).t()) * self.logit_scale.exp()
        labels = torch.arange(a.shape[0], device=a.device)
        loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
        return loss - F.log_softmax(logits / self.temperature, -1).mean()


class GatedScan(nn.Module):
    """A Mamba-like selective scan written with cumsum and exp (no custom kernel): softplus step sizes, log-space
    decay, einsums and a SiLU gate."""

    def __init__(self, dim=16, state=8, device=None):
        super().__init__()
        self.inp = nn.Linear(dim, 2 * dim, device=device)
        self.dt = nn.Linear(dim, dim, device=device)
        self.a_log = nn.Parameter(torch.log(torch.arange(1, state + 1, device=device).float()).repeat(dim, 1))
        self.bc = nn.Linear(dim, 2 * state, device=device)
        self.out = nn.Linear(dim, dim, device=device)

    def forward(self, x):
        u, gate = self.inp(x).chunk(2, -1)
        dt = F.softplus(self.dt(u))
        bmat, cmat = self.bc(u).chunk(2, -1)
        log_decay = torch.cumsum(dt[..., None] * -torch.exp(self.a_log), dim=1)
        inc = torch.einsum("btd,btn->btdn", dt * u, bmat)
        h = torch.exp(log_decay) * torch.cumsum(inc * torch.exp(-log_decay).clamp(max=1e4), dim=1)
        return self.out(torch.einsum("btdn,btn->btd", h, cmat) * F.silu(gate))


class IndexOpsMix(nn.Module):
    """Token routing and bucketing ops: argsort, gather, scatter_add, index_put with accumulate, masked_fill,
    where, sort and cumsum."""

    def __init__(self, dim=16, buckets=4, device=None):
        super().__init__()
        self.proj = nn.Linear(dim, dim, device=device)
        self.score = nn.Linear(dim, 1, device=device)
        self.buckets = buckets

    def forward(self, x):
        h = torch.tanh(self.proj(x))
        s = self.score(h).squeeze(-1)
        top = torch.gather(h, 0, torch.argsort(s, descending=True)[:, None].expand_as(h))
        bucket = torch.arange(h.shape[0], device=x.device) % self.buckets
        pooled = h.new_zeros(self.buckets, h.shape[1]).scatter_add(0, bucket[:, None].expand_as(h), top)
        acc = h.new_zeros(self.buckets, h.shape[1]).index_put((bucket,), h * s[:, None].sigmoid(), accumulate=True)
        masked = (pooled + acc).masked_fill(acc.abs() < 1e-3, 0.0)
        return torch.where(masked > 0, masked, masked * 0.1).sum() + s.sort().values.cumsum(0).mean()


class StochasticDepthStack(nn.Module):
    """Residual MLP blocks with layer scale and drop-path (a per-sample bernoulli_), the first block under
    torch.utils.checkpoint: random draws inside and outside a checkpoint."""

    def __init__(self, dim=32, blocks=3, p=0.2, device=None):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Sequential(nn.LayerNorm(dim, device=device),
                                                   nn.Linear(dim, 2 * dim, device=device), nn.GELU(),
                                                   nn.Linear(2 * dim, dim, device=device)) for _ in range(blocks)])
        self.gamma = nn.ParameterList([nn.Parameter(torch.full((dim,), 0.1, device=device)) for _ in range(blocks)])
        self.p = p

    def drop_path(self, x):
        return x * x.new_empty(x.shape[0], 1, 1).bernoulli_(1 - self.p) / (1 - self.p)

    def forward(self, x):
        from torch.utils.checkpoint import checkpoint

        for i, (block, gamma) in enumerate(zip(self.blocks, self.gamma)):
            if i == 0:
                x = x + checkpoint(lambda t: self.drop_path(block(t) * gamma), x, use_reentrant=False)
            else:
                x = x + self.drop_path(block(x) * gamma)
        return x


class DinoDropPathBlock(nn.Module):
    """DINOv2's drop_add_residual_stochastic_depth: a random subset of the batch (randperm(b)[:k]) goes through
    the residual MLP and is index_add'ed back scaled by b / k: inductor's randperm patterns make the index and
    the index_add _unsafe_index(_put)."""

    def __init__(self, dim=32, ratio=0.5, device=None):
        super().__init__()
        self.norm = nn.LayerNorm(dim, device=device)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim, device=device), nn.GELU(),
                                 nn.Linear(2 * dim, dim, device=device))
        self.ratio = ratio

    def forward(self, x):
        b = x.shape[0]
        k = max(int(b * (1 - self.ratio)), 1)
        subset = torch.randperm(b, device=x.device)[:k]
        residual = self.mlp(self.norm(x[subset]))
        out = torch.index_add(x.flatten(1), 0, subset, residual.flatten(1).to(dtype=x.dtype), alpha=b / k)
        return out.view_as(x)


class RandpermShuffle(nn.Module):
    """MoCo's batch shuffle: the batch indexed by a full randperm, and index_add'ed back."""

    def __init__(self, dim=16, device=None):
        super().__init__()
        self.fc = nn.Linear(dim, dim, device=device)

    def forward(self, x):
        order = torch.randperm(x.shape[0], device=x.device)
        return torch.index_add(x, 0, order, torch.tanh(self.fc(x[order])))


class EagerHeads(nn.Module):
    """transformers' eager self-attention layers: q, k, v projections split into (B, heads, L, head_dim), attention
    dropout."""

    def __init__(self, dim=32, heads=4, p=0.0, device=None):
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        self.q = nn.Linear(dim, dim, device=device)
        self.k = nn.Linear(dim, dim, device=device)
        self.v = nn.Linear(dim, dim, device=device)
        self.drop = nn.Dropout(p)

    def split(self, t):
        return t.view(t.shape[0], t.shape[1], self.heads, self.hd).permute(0, 2, 1, 3)


class EagerViTSelfAttention(EagerHeads):
    """transformers' ViTSelfAttention, eager: q @ k^T / sqrt(d), softmax, dropout, @ v, no mask. inductor's
    fuse_attention rewrites it (forward and backward) into scaled_dot_product_attention: with no dropout the CPU's
    fused kernel, with dropout sdpa's math form (both replayed)."""

    def __init__(self, dim=32, heads=4, p=0.0, device=None):
        super().__init__(dim, heads, p, device)
        self.o = nn.Linear(dim, dim, device=device)

    def forward(self, x):
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.hd)
        probs = self.drop(F.softmax(scores, dim=-1))
        return x + self.o(torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous().view(x.shape))


class BertEagerSelfAttention(EagerHeads):
    """transformers' BertSelfAttention, eager: q @ k^T / sqrt(d) plus the extended additive padding mask
    ((1 - mask) * finfo.min), softmax, dropout, @ v. inductor's fuse_attention makes it sdpa's math form with the
    mask (forward and backward), replayed."""

    def __init__(self, dim=32, heads=4, p=0.1, device=None):
        super().__init__(dim, heads, p, device)

    def forward(self, x, mask):
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        extended = (1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.hd) + extended
        probs = self.drop(F.softmax(scores, dim=-1))
        return torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous().view(x.shape)


class ScaledAttention(nn.Module):
    """The textbook attention on (B, H, L, E) inputs: softmax(q @ k^T * 0.25) @ v (fuse_attention's pattern 2)."""

    def forward(self, q, k, v):
        return torch.matmul(q, k.transpose(-2, -1)).mul(0.25).softmax(dim=-1).matmul(v)


class CrossAttention(nn.Module):
    """A decoder's cross-attention, eager: queries of one length over keys and values of another,
    softmax(q @ k^T / 2) @ v (fuse_attention's pattern 1 with a longer key)."""

    def forward(self, q, k, v):
        return torch.matmul(q, k.transpose(-2, -1)).div(2.0).softmax(dim=-1).matmul(v)


class CheckpointedModule(nn.Module):
    """A module run under torch.utils.checkpoint (non-reentrant)."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, *args):
        from torch.utils.checkpoint import checkpoint
        return checkpoint(self.inner, *args, use_reentrant=False)


class ResNetBasicBlock(nn.Module):
    """torchvision's BasicBlock with ReLU(inplace=True), BN, a strided downsample, then maxpool and adaptive avg
    pool + fc."""
    def __init__(self, cin=8, cout=16):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=2, bias=False), nn.BatchNorm2d(cout))
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.fc = nn.Linear(cout, 10)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += self.down(x)
        out = self.relu(out)
        out = self.pool(out)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(out, 1), 1))


class SwinWindowAttention(nn.Module):
    """Swin's shifted-window attention: roll, window partition (view / permute), q * scale @ k^T plus a relative
    position bias gathered by index, a shift mask, softmax, @ v, windows merged back, roll back."""
    def __init__(self, dim=16, heads=2, ws=4):
        super().__init__()
        self.heads, self.hd, self.ws = heads, dim // heads, ws
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.table = nn.Parameter(torch.randn((2 * ws - 1) ** 2, heads) * 0.02)
        coords = torch.stack(torch.meshgrid(torch.arange(ws), torch.arange(ws), indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + (ws - 1)
        self.register_buffer("index", rel[..., 0] * (2 * ws - 1) + rel[..., 1], persistent=False)

    def forward(self, x):
        b, h, w, c = x.shape
        ws, s = self.ws, self.ws // 2
        x = torch.roll(x, (-s, -s), (1, 2))
        win = x.view(b, h // ws, ws, w // ws, ws, c).permute(0, 1, 3, 2, 4, 5).reshape(-1, ws * ws, c)
        qkv = self.qkv(win).reshape(win.shape[0], ws * ws, 3, self.heads, self.hd).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0] * self.hd ** -0.5, qkv[1], qkv[2]
        bias = self.table[self.index.view(-1)].view(ws * ws, ws * ws, -1).permute(2, 0, 1)
        attn = (q @ k.transpose(-2, -1)) + bias[None]
        mask = torch.zeros(ws * ws, ws * ws, device=x.device)
        mask[: ws * ws // 2, ws * ws // 2:] = -100.0
        attn = (attn + mask).softmax(-1)
        y = (attn @ v).transpose(1, 2).reshape(-1, ws * ws, c)
        y = self.proj(y).view(b, h // ws, w // ws, ws, ws, c).permute(0, 1, 3, 2, 4, 5).reshape(b, h, w, c)
        return torch.roll(y, (s, s), (1, 2))


class ArcFaceLoss(nn.Module):
    """ArcFace's additive angular margin: normalized embeddings and class weights, acos, a margin on the true
    class through F.one_hot (whose range asserts on the labels the joint graph holds), cross-entropy with label
    smoothing."""

    def __init__(self, dim=16, classes=10, s=30.0, m=0.5, device=None):
        super().__init__()
        self.w = nn.Parameter(torch.randn(classes, dim, device=device))
        self.s, self.m = s, m

    def forward(self, x, labels):
        cos = F.linear(F.normalize(x), F.normalize(self.w)).clamp(-1 + 1e-7, 1 - 1e-7)
        onehot = F.one_hot(labels, cos.shape[-1]).to(cos.dtype)
        logits = self.s * torch.cos(torch.acos(cos) + self.m * onehot)
        return F.cross_entropy(logits, labels, label_smoothing=0.1)


class ConformerConv(nn.Module):
    """Conformer's convolution module: pointwise conv, GLU, depthwise conv1d, BatchNorm1d (training: the running
    variance's n / (n - 1) correction), SiLU, pointwise conv, dropout, residual."""

    def __init__(self, dim=32, k=7):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        self.pw1 = nn.Conv1d(dim, 2 * dim, 1)
        self.dw = nn.Conv1d(dim, dim, k, padding=k // 2, groups=dim)
        self.bn = nn.BatchNorm1d(dim)
        self.pw2 = nn.Conv1d(dim, dim, 1)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        h = self.ln(x).transpose(1, 2)
        h = F.glu(self.pw1(h), dim=1)
        h = F.silu(self.bn(self.dw(h)))
        return x + self.drop(self.pw2(h).transpose(1, 2))


class VQBottleneck(nn.Module):
    """VQ-VAE's bottleneck: nearest code by cdist + argmin, a straight-through estimator, commitment losses (two
    mse_loss means: under dynamic sizes their backward scales by 2 / (16 * s0 * s1), a float expression of a
    product of size symbols)."""

    def __init__(self, dim=16, codes=32):
        super().__init__()
        self.enc = nn.Linear(dim, dim)
        self.codebook = nn.Parameter(torch.randn(codes, dim))
        self.dec = nn.Linear(dim, dim)

    def forward(self, x):
        z = self.enc(x)
        idx = torch.cdist(z.reshape(-1, z.shape[-1]), self.codebook).argmin(-1)
        zq = F.embedding(idx, self.codebook).view_as(z)
        commit = F.mse_loss(z, zq.detach()) + 0.25 * F.mse_loss(zq, z.detach())
        zq = z + (zq - z).detach()
        return self.dec(zq).pow(2).mean() + commit


class GNNMessagePassing(nn.Module):
    """PyG-style message passing: index_select the sources, an edge MLP, scatter_add into the targets, a mean by
    degree (scatter_reduce 'mean'), a GRU-like gate."""
    def __init__(self, dim=16):
        super().__init__()
        self.msg = nn.Sequential(nn.Linear(2 * dim, dim), nn.SiLU(), nn.Linear(dim, dim))
        self.gate = nn.Linear(2 * dim, dim)

    def forward(self, x, src, dst):
        m = self.msg(torch.cat([x.index_select(0, src), x.index_select(0, dst)], -1))
        agg = torch.zeros_like(x).scatter_add(0, dst[:, None].expand_as(m), m)
        mean = torch.zeros_like(x).scatter_reduce(0, dst[:, None].expand_as(m), m, reduce="mean", include_self=False)
        z = torch.sigmoid(self.gate(torch.cat([x, agg], -1)))
        return z * x + (1 - z) * mean

class _SigmoidGate(torch.autograd.Function):
    """x * sigmoid(w) with a hand-written backward (what dynamo traces as an autograd.Function)."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w.sigmoid()

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        s = w.sigmoid()
        return grad * s, (grad * x * s * (1 - s)).sum(0)


class CheckpointedDropoutMLP(nn.Module):
    """A weight-normed linear, then nn.Dropout + linear + hardswish under torch.utils.checkpoint (non-reentrant),
    a custom autograd.Function gate and log_softmax: the recomputed dropout draws from aten.rand, which inductor's
    replace_random turns into inductor_seeds, whose RNG state the forward then returns."""

    def __init__(self, dim=24, hidden=48, classes=10, p=0.2, device=None):
        super().__init__()
        self.fc1 = nn.utils.parametrizations.weight_norm(nn.Linear(dim, hidden, device=device))
        self.fc2 = nn.Linear(hidden, hidden, device=device)
        self.gate = nn.Parameter(torch.randn(hidden, device=device))
        self.head = nn.Linear(hidden, classes, device=device)
        self.drop = nn.Dropout(p)

    def block(self, h):
        return F.hardswish(self.fc2(self.drop(h)))

    def forward(self, x):
        from torch.utils.checkpoint import checkpoint

        h = checkpoint(self.block, self.fc1(x), use_reentrant=False)
        return F.log_softmax(self.head(_SigmoidGate.apply(h, self.gate)), -1)


class CollectiveMLP(nn.Module):
    """Sequence-parallel style MLP with torch.distributed._functional_collectives: all_gather the sequence shard,
    MLP, all_reduce the output over the group (needs an initialized process group, e.g. the fake one)."""

    def __init__(self, dim=16, hidden=32, device=None):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden, device=device)
        self.fc2 = nn.Linear(hidden, dim, device=device)

    def forward(self, x):
        import torch.distributed as dist
        import torch.distributed._functional_collectives as funcol

        group = dist.group.WORLD
        full = funcol.all_gather_tensor(x, gather_dim=0, group=group)
        y = self.fc2(F.gelu(self.fc1(full)))
        y = funcol.all_reduce(y, "sum", group=group)
        return y.sum(dim=0)


class GraphBreakMLPs(nn.Module):
    """Two MLPs with a dynamo graph break between them (torch.compile sees two graphs)."""

    def __init__(self, dim=16, hidden=32, device=None):
        super().__init__()
        self.first = MLP(dim, hidden, device=device)
        self.second = MLP(dim, hidden, device=device)

    def forward(self, x):
        x = self.first(x)
        torch._dynamo.graph_break()
        return self.second(x).tanh()


def fake_process_group(world_size=2, rank=0):
    """Initializes torch.distributed with the fake backend (no communication) unless a group already exists."""
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if not dist.is_initialized():
        dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=world_size)
    return dist.group.WORLD


def _op_set(*names):
    """aten overloads by "name.overload", skipping those this torch lacks."""
    ops = set()
    for text in names:
        packet, overload = text.split(".")
        op = getattr(getattr(torch.ops.aten, packet, None), overload, None)
        if op is not None:
            ops.add(op)
    return ops


MATMUL_OPS = ("mm.default", "addmm.default", "bmm.default")
ATTENTION_OPS = ("_scaled_dot_product_flash_attention_for_cpu.default", "_scaled_dot_product_flash_attention.default",
                 "_scaled_dot_product_efficient_attention.default", "_scaled_dot_product_cudnn_attention.default")


def sac_context(rules, default="PREFER_RECOMPUTE"):
    """context_fn for torch.utils.checkpoint: selective checkpointing with a policy that gives the ops of each
    (policy name, aten op names) rule that CheckpointPolicy, and `default` to every other op."""
    import functools

    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts

    table = []
    for policy, names in rules:
        table.append((_op_set(*names), getattr(CheckpointPolicy, policy)))
    fallback = getattr(CheckpointPolicy, default)

    def policy_fn(ctx, op, *args, **kwargs):
        for ops, policy in table:
            if op in ops:
                return policy
        return fallback

    return functools.partial(create_selective_checkpoint_contexts, policy_fn)


def every_other_mm_context():
    """torchtitan's op-level SAC: save the attention op, save every second matmul, recompute the rest. The matmul
    counter is per checkpoint context (forward and recompute count alike)."""
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts

    attention = _op_set(*ATTENTION_OPS)
    matmuls = _op_set("mm.default", "addmm.default")

    def make():
        counts = {"forward": 0, "recompute": 0}

        def policy_fn(ctx, op, *args, **kwargs):
            if op in attention:
                return CheckpointPolicy.MUST_SAVE
            if op in matmuls:
                key = "recompute" if ctx.is_recompute else "forward"
                counts[key] += 1
                return CheckpointPolicy.MUST_SAVE if counts[key] % 2 == 0 else CheckpointPolicy.PREFER_RECOMPUTE
            return CheckpointPolicy.PREFER_RECOMPUTE

        return create_selective_checkpoint_contexts(policy_fn)

    return make


KNAPSACK_SOLVERS = ("greedy", "ilp", "dp")
MEMORY_BUDGETS = (0.1, 0.5, 0.8)


def _x(*shape):
    return torch.randn(*shape, requires_grad=True)


def _gpt_sdpa_stack(layers=2, dropout=0.0, checkpoint=False, context_fn=None):
    blocks = [GPTBlockSDPA(32, 4, dropout) for _ in range(layers)]
    return CheckpointedStack(blocks, nn.LayerNorm(32), checkpoint=checkpoint, context_fn=context_fn)


def _llama3_stack(layers=2, checkpoint=False, context_fn=None):
    blocks = [Llama3Block(32, 4, 2, 64) for _ in range(layers)]
    return CheckpointedStack(blocks, RMSNorm(32), checkpoint=checkpoint, context_fn=context_fn)


def _tiny_lm():
    torch.manual_seed(0)
    model = TinyLM(vocab=64, dim=32, heads=4, layers=2, context=16, dropout=0.1)
    return model, (torch.randint(0, 64, (2, 16)), torch.randint(0, 64, (2, 16)))


def torch2_zoo_builders():
    """name -> builder() returning (model, example args, options). Nothing is built (or needs torch 2) until a
    builder runs. options (all optional): via ("compile" / "aot"; default: export_joint's, i.e. compile on torch 2),
    memory_budget, solver (torch._functorch.config.activation_memory_budget / _solver), dynamic ({arg index: dims}
    for torch._dynamo.mark_dynamic), compile_dynamic (torch.compile(dynamic=True)), graph_breaks, and "about" (a
    line of text)."""
    cases = {}

    def case(name, about, **options):
        def register(build):
            def builder():
                torch.manual_seed(0)
                model, args = build()
                return model, args, dict(options, about=about)

            cases[name] = builder
            return build

        return register

    @case("mlp", "two-layer GELU MLP")
    def _():
        return MLP(16, 64), (_x(8, 16),)

    @case("mlp_aot", "two-layer GELU MLP through aot_module (via='aot')", via="aot")
    def _():
        return MLP(16, 64), (_x(8, 16),)

    @case("gpt_block_sdpa", "pre-norm GPT block with F.scaled_dot_product_attention (causal)")
    def _():
        return GPTBlockSDPA(32, 4), (_x(2, 16, 32),)

    @case("gpt_block_eager_attention", "GPT block with explicit masked softmax attention")
    def _():
        return GPTBlock(32, 4), (_x(2, 16, 32),)

    @case("llama3_block", "LLaMA-3 block: RMSNorm, GQA (4 heads / 2 kv heads), RoPE, SDPA, SwiGLU")
    def _():
        return Llama3Block(32, 4, 2, 64), (_x(2, 16, 32),)

    @case("llama3_stack", "two LLaMA-3 blocks and a final RMSNorm")
    def _():
        return _llama3_stack(2), (_x(2, 16, 32),)

    @case("moe_topk", "top-2 of 4 experts: softmax router, topk, gathered expert weights, index_add, scatter aux loss")
    def _():
        return MoELayer(16, 32, 4, 2), (_x(2, 8, 16),)

    @case("convnet_bn_train", "conv + batch norm (train mode: running stats are mutated buffers) + linear head")
    def _():
        return ConvNet(8, 10).train(), (_x(2, 3, 8, 8),)

    @case("tiny_lm_dropout_ce", "LM: token + position embeddings, dropout, 2 GPT blocks, cross-entropy loss")
    def _():
        return _tiny_lm()

    @case("gpt_stack_ac", "two GPT (SDPA) blocks, each under torch.utils.checkpoint (non-reentrant)")
    def _():
        return _gpt_sdpa_stack(2, checkpoint=True), (_x(2, 16, 32),)

    @case("gpt_stack_ac_dropout", "checkpointed GPT blocks with dropout inside: the forward returns RNG states")
    def _():
        return _gpt_sdpa_stack(2, dropout=0.1, checkpoint=True), (_x(2, 16, 32),)

    @case("ac_dropout_custom_fn", "weight-normed linear, nn.Dropout under torch.utils.checkpoint (inductor draws it "
          "through inductor_seeds), a custom autograd.Function")
    def _():
        return CheckpointedDropoutMLP(), (_x(16, 24),)

    @case("dynamic_true_masked_attention", "checkpointed attention with a mask and dropout_p, compiled with "
          "dynamic=True: guards specialize two of its symbols", compile_dynamic=True)
    def _():
        return CheckpointedMaskedAttention(), (_x(2, 6, 32), torch.randn(2, 4, 6, 6))

    @case("literal_noops", "literal identities (+ 0 on integer buckets, * 1, / 1.0, - 0, int * 1.0), one in a "
          "checkpointed region")
    def _():
        return LiteralNoOps(16), (_x(4, 16),)

    @case("embedding_max_norm", "nn.Embedding(max_norm=1.0): its weight, mutated in place by the forward, may "
          "not be saved")
    def _():
        return RenormedEmbedding(), (torch.randint(0, 40, (3, 5)),)

    @case("autocast_bf16_dropout", "MLP + dropout under CPU autocast to bfloat16: bfloat16 random draws")
    def _():
        return AutocastDropoutMLP(), (_x(4, 16),)

    @case("dynamic_true_float_attributes", "RMS norm with eps and scale as Python floats, compiled with "
          "dynamic=True: SymFloat inputs that tensorify_python_scalars turns into tensors", compile_dynamic=True)
    def _():
        return FloatAttributeNorm(), (_x(4, 16),)

    @case("dynamic_true_lm_loss", "GELU-tanh reading math.pi, an LM head over the last `keep` positions and a "
          "cross-entropy ignoring padding, compiled with dynamic=True", compile_dynamic=True)
    def _():
        ids = torch.randint(0, 48, (2, 8))
        return DynamicLMLoss(), (ids, ids.clone(), 0)

    @case("fused_qkv_stack_ac", "input projection and layer norm, then two Falcon-style blocks (fused qkv, key and "
          "value by list index) each under torch.utils.checkpoint")
    def _():
        return EmbeddedCheckpointedStack([FusedQKVBlock(), FusedQKVBlock()]), (_x(2, 16, 32),)

    @case("lora_mlp", "LoRA on a pre-norm MLP: frozen base weights and norm, trainable low-rank A and B")
    def _():
        return LoRAMLP(), (_x(2, 8, 32),)

    @case("complex_rope", "LLaMA-1 rotary embedding through view_as_complex / view_as_real (complex64), SDPA")
    def _():
        return ComplexRoPEAttention(), (_x(2, 16, 32),)

    @case("unet_resblock", "diffusion UNet res block: GroupNorm, SiLU, convs, time embedding, nearest upsample")
    def _():
        return UNetResBlock(), (_x(2, 16, 8, 8), _x(2, 32))

    @case("distilled_lm", "tied LM head, label smoothing, KL to a detached softmax(logits * 0.5), z-loss: "
          "inductor's mul_softmax_pattern")
    def _():
        return DistilledLM(), (torch.randint(0, 64, (2, 8)), torch.randint(0, 64, (2, 8)))

    @case("contrastive_clip", "CLIP loss: image @ text^T * logit_scale.exp(), symmetric cross-entropy, "
          "log_softmax(logits / T): inductor's softmax patterns with a tensor scale and a division")
    def _():
        return ContrastiveCLIP(), (_x(6, 16), _x(6, 16))

    @case("gated_scan", "Mamba-like selective scan with cumsum / exp / einsum and a SiLU gate")
    def _():
        return GatedScan(), (_x(2, 12, 16),)

    @case("index_ops_mix", "argsort, gather, scatter_add, index_put(accumulate), masked_fill, sort, cumsum")
    def _():
        return IndexOpsMix(), (_x(8, 16),)

    @case("stochastic_depth", "drop-path (bernoulli_) and layer scale, the first block checkpointed")
    def _():
        return StochasticDepthStack(), (_x(4, 6, 32),)

    @case("dino_drop_path", "DINOv2 drop-path: randperm(b)[:k] picks the rows the residual sees, index_add puts them "
          "back: inductor's sliced randperm patterns")
    def _():
        return DinoDropPathBlock(), (_x(8, 4, 32),)

    @case("randperm_shuffle", "MoCo batch shuffle: x[randperm(b)] and index_add back: inductor's full randperm "
          "patterns (torch 2.14, 2.15)")
    def _():
        return RandpermShuffle(), (_x(8, 16),)

    @case("hf_vit_eager_attention", "transformers' eager ViT self-attention (no mask): inductor's fuse_attention makes "
          "it the CPU's fused scaled-dot-product attention, forward and backward")
    def _():
        return EagerViTSelfAttention(), (_x(2, 16, 32),)

    @case("hf_vit_eager_attention_dropout", "the same with attention dropout: fuse_attention's replacement is sdpa's "
          "math form (no fused CPU kernel takes dropout)")
    def _():
        return EagerViTSelfAttention(p=0.1), (_x(2, 16, 32),)

    @case("checkpointed_vit_attention_dropout", "the eager ViT attention with dropout under torch.utils.checkpoint "
          "(non-reentrant, as transformers' gradient checkpointing): fuse_attention's math form carries the "
          "checkpoint's recompute tags (percolate_tags)")
    def _():
        return CheckpointedModule(EagerViTSelfAttention(p=0.1)), (_x(2, 16, 32),)

    @case("bert_eager_attention", "transformers' eager BERT self-attention: an additive padding mask and attention "
          "dropout; fuse_attention makes it sdpa's math form with the mask")
    def _():
        mask = torch.ones(2, 16)
        mask[1, 12:] = 0
        return BertEagerSelfAttention(), (_x(2, 16, 32), mask)

    @case("resnet_block", "torchvision's BasicBlock: ReLU(inplace=True), batch norm (train), a strided downsample, "
          "max pool, adaptive average pool")
    def _():
        return ResNetBasicBlock().train(), (_x(2, 8, 16, 16),)

    @case("swin_window_attention", "Swin's shifted windows: roll, window partition, a relative position bias "
          "gathered by index, a shift mask, softmax")
    def _():
        return SwinWindowAttention(), (_x(2, 8, 8, 16),)

    @case("gnn_message_passing", "PyG-style message passing: index_select, an edge MLP, scatter_add and "
          "scatter_reduce('mean') into the targets, a gate")
    def _():
        src, dst = torch.tensor([0, 1, 2, 3, 4, 5, 1, 2]), torch.tensor([1, 2, 3, 4, 5, 0, 0, 3])
        return GNNMessagePassing(), (_x(6, 16), src, dst)

    @case("arcface_loss", "ArcFace's angular margin: F.one_hot's asserts on the labels stay out of the backward "
          "(reordering_to_mimic_autograd_engine), acos, cross-entropy with label smoothing")
    def _():
        return ArcFaceLoss(), (_x(6, 16), torch.randint(0, 10, (6,)))

    @case("dynamic_true_drop_path", "drop-path divides by 1 - p, p a Python float, compiled with dynamic=True: "
          "tensorify_python_scalars interprets the float expression 1.0 - zf (Add, Mul(-1, zf))", compile_dynamic=True)
    def _():
        return StochasticDepthStack(), (_x(4, 6, 32),)

    @case("dynamic_true_dino_drop_path", "DINOv2 drop-path compiled with dynamic=True: k = int(b * 0.5) is "
          "Max(1, TruncToInt(0.5*ToFloat(s))), and the sliced randperm pattern's re-trace matches index but not "
          "index_add (its slice end is neither a size symbol passed in nor sym_size)", compile_dynamic=True)
    def _():
        return DinoDropPathBlock(), (_x(8, 4, 32),)

    @case("dynamic_true_vq_bottleneck", "VQ-VAE bottleneck (cdist, argmin, straight-through, commitment losses) "
          "compiled with dynamic=True: tensorify_python_scalars interprets 2.0 / ToFloat(16*s27*s77), sympy's "
          "product of sizes sorted by name", compile_dynamic=True)
    def _():
        return VQBottleneck(), (_x(2, 5, 16),)

    @case("dynamic_true_conformer_conv", "Conformer convolution module (GLU, depthwise conv1d, BatchNorm1d) compiled "
          "with dynamic=True: the variance correction n / (n - 1) divides two ints, IntTrueDiv, a SymFloat",
          compile_dynamic=True)
    def _():
        return ConformerConv(), (_x(2, 20, 32),)

    @case("dynamic_true_scaled_attention", "softmax(q @ k^T * s) @ v on inputs of a symbolic batch, compiled with "
          "dynamic=True: torch's re-trace of fuse_attention's pattern for the symbolic sizes does not match, so it "
          "is not fused (jointscope does not re-trace and leaves every symbolic match alone, saying so)",
          compile_dynamic=True)
    def _():
        return ScaledAttention(), (_x(2, 4, 16, 8), _x(2, 4, 16, 8), _x(2, 4, 16, 8))

    @case("cross_attention", "a cross-attention, queries of length 8 over keys of 12: fuse_attention's replacement "
          "is sized by the query's length and the key's apart")
    def _():
        return CrossAttention(), (_x(2, 4, 8, 16), _x(2, 4, 12, 16), _x(2, 4, 12, 16))

    @case("dynamic_true_unet_upsample", "UNet res block with a nearest upsample by 2, compiled with dynamic=True: "
          "the scale is FloatTrueDiv(ToFloat(s), 2.0*ToFloat(s)) of an integer size symbol", compile_dynamic=True)
    def _():
        return UNetResBlock(), (_x(2, 16, 8, 8), _x(2, 32))

    @case("llama3_stack_ac", "two LLaMA-3 blocks under full activation checkpointing")
    def _():
        return _llama3_stack(2, checkpoint=True), (_x(2, 16, 32),)

    @case("sac_save_matmuls", "selective checkpointing: MUST_SAVE mm / addmm / bmm, PREFER_RECOMPUTE the rest")
    def _():
        context = sac_context([("MUST_SAVE", MATMUL_OPS)])
        return _gpt_sdpa_stack(2, checkpoint=True, context_fn=context), (_x(2, 16, 32),)

    @case("sac_save_attention", "selective checkpointing: MUST_SAVE the SDPA op, PREFER_RECOMPUTE the rest")
    def _():
        context = sac_context([("MUST_SAVE", ATTENTION_OPS)])
        return _gpt_sdpa_stack(2, checkpoint=True, context_fn=context), (_x(2, 16, 32),)

    @case("sac_must_recompute", "selective checkpointing: MUST_RECOMPUTE gelu / layer norm, MUST_SAVE addmm, "
          "PREFER_SAVE the rest")
    def _():
        context = sac_context([("MUST_RECOMPUTE", ("gelu.default", "native_layer_norm.default")),
                               ("MUST_SAVE", ("addmm.default",))], default="PREFER_SAVE")
        return _gpt_sdpa_stack(2, checkpoint=True, context_fn=context), (_x(2, 16, 32),)

    @case("sac_llama3_every_other_mm", "LLaMA-3 blocks, torchtitan op-level SAC: save SDPA and every second matmul")
    def _():
        return _llama3_stack(2, checkpoint=True, context_fn=every_other_mm_context()), (_x(2, 16, 32),)

    for budget in MEMORY_BUDGETS:
        for solver in KNAPSACK_SOLVERS:
            def build_budget():
                return _gpt_sdpa_stack(2), (_x(2, 16, 32),)

            name = "budget_%s_%s" % (str(budget).replace(".", ""), solver)
            case(name, "two GPT (SDPA) blocks, activation_memory_budget %s, %s knapsack" % (budget, solver),
                 memory_budget=budget, solver=solver)(build_budget)

    @case("llama3_budget_05_dp", "two LLaMA-3 blocks, activation_memory_budget 0.5, dp knapsack",
          memory_budget=0.5, solver="dp")
    def _():
        return _llama3_stack(2), (_x(2, 16, 32),)

    @case("dynamic_mlp_batch", "MLP with a dynamic batch dimension (torch._dynamo.mark_dynamic)", dynamic={0: 0})
    def _():
        return MLP(16, 64), (_x(8, 16),)

    # Budgets together with checkpointing and dynamic shapes: what people tune (each once differed from torch).
    for budget in (0.5, 0.1):
        tag = "%02d" % int(budget * 10)

        @case("gpt_stack_ac_budget_" + tag, "two checkpointed GPT blocks, activation_memory_budget %s" % budget,
              memory_budget=budget, solver="dp")
        def _():
            return _gpt_sdpa_stack(2, checkpoint=True), (_x(2, 16, 32),)

        @case("sac_save_matmuls_budget_" + tag, "selective checkpointing (MUST_SAVE matmuls), budget %s" % budget,
              memory_budget=budget, solver="dp")
        def _():
            context = sac_context([("MUST_SAVE", MATMUL_OPS)])
            return _gpt_sdpa_stack(2, checkpoint=True, context_fn=context), (_x(2, 16, 32),)

        @case("sac_save_attention_budget_" + tag, "selective checkpointing (MUST_SAVE SDPA), budget %s" % budget,
              memory_budget=budget, solver="dp")
        def _():
            context = sac_context([("MUST_SAVE", ATTENTION_OPS)])
            return _gpt_sdpa_stack(2, checkpoint=True, context_fn=context), (_x(2, 16, 32),)

        @case("dynamic_gpt_batch_budget_" + tag, "GPT block with a dynamic batch, budget %s" % budget,
              dynamic={0: 0}, memory_budget=budget, solver="dp")
        def _():
            return GPTBlockSDPA(32, 4), (_x(2, 16, 32),)

    @case("dynamic_gpt_seq", "GPT (SDPA) block with a dynamic sequence length", dynamic={0: 1})
    def _():
        return GPTBlockSDPA(32, 4), (_x(2, 16, 32),)

    @case("dynamic_size_output", "forward returns (tensor, its dynamic size): a SymInt among the forward's outputs",
          dynamic={0: 0})
    def _():
        return SizeOutput(16), (_x(8, 16),)

    @case("nested_compile_region", "three MLP layers sharing one torch.compiler.nested_compile_region body "
          "(invoke_subgraph)")
    def _():
        return NestedRegionMLP(16, 32, 3), (_x(4, 16),)

    @case("nested_region_ac_dropout", "nested_compile_region whose body checkpoints an MLP with dropout: the body's "
          "forward returns the recomputed dropout's RNG state on the CPU")
    def _():
        return NestedRegionCheckpointedDropout(16, 32, 3), (_x(4, 16),)

    @case("graph_break_two_graphs", "two MLPs with torch._dynamo.graph_break() between them: two joint graphs "
          "(graph_breaks='all')", graph_breaks="all")
    def _():
        return GraphBreakMLPs(16, 32), (_x(4, 16),)

    @case("functional_collectives", "all_gather + all_reduce from _functional_collectives on a fake 2-rank group")
    def _():
        fake_process_group()
        return CollectiveMLP(16, 32), (_x(4, 16),)

    return cases


def torch2_zoo(only=None):
    """The torch 2 zoo built: name -> (model, example args, options); `only` limits it to some names."""
    builders = torch2_zoo_builders()
    names = list(builders) if only is None else list(only)
    unknown = [n for n in names if n not in builders]
    if unknown:
        raise KeyError("torch2_zoo: unknown cases %s (known: %s)" % (unknown, ", ".join(builders)))
    return {name: builders[name]() for name in names}
