import torch


def _kl_cos_sin(seq_len, head_dim, dtype, device):
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim))
    t = torch.arange(seq_len, device=device, dtype=torch.float32)
    emb = torch.cat([torch.outer(t, inv_freq)] * 2, dim=-1)  # [seq_len, head_dim], halves repeated
    return emb.cos().to(dtype), emb.sin().to(dtype)


def test_fast_rope_embedding():
    # Q, K: [batch, n_heads, seq_len, head_dim]; cos, sin: [seq_len, head_dim] (HF layout, the
    # kernel reads the first half of each row). Forward and backward (the autograd Function).
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for B, H, S, D, dtype in ((1, 8, 128, 64, torch.float32), (1, 6, 96, 80, torch.float16)):
        q = torch.randn(B, H, S, D, device=device, dtype=dtype).requires_grad_()
        k = torch.randn(B, H, S, D, device=device, dtype=dtype).requires_grad_()
        cos, sin = _kl_cos_sin(S, D, dtype, device)
        q_out, k_out = fast_rope_embedding(q, k, cos, sin)
        dq_out = torch.randn_like(q_out)
        dk_out = torch.randn_like(k_out)
        torch.autograd.backward([q_out, k_out], [dq_out, dk_out])
        key = f"{str(dtype)[6:]}_b{B}h{H}s{S}d{D}"
        results[key + "_q"] = q_out.detach()
        results[key + "_k"] = k_out.detach()
        results[key + "_dq"] = q.grad
        results[key + "_dk"] = k.grad
    return results
