import torch


def _kl_cos_sin(seq_len, head_dim, dtype, device):
    # Hugging Face layout: emb = cat(freqs, freqs), shape (1, seq_len, head_dim)
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim))
    t = torch.arange(seq_len, device=device, dtype=torch.float32)
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)[None]
    return emb.cos().to(dtype), emb.sin().to(dtype)


def test_rope_forward():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # q: (batch, n_q_heads, seq, head_dim), k: (batch, n_kv_heads, seq, head_dim)
    # (the rotation is computed in the dtype of cos/sin: the bf16 case passes fp32 cos/sin)
    for B, HQ, HKV, S, D, dtype, cs_dtype in ((2, 8, 2, 100, 64, torch.float32, torch.float32),
                                              (1, 12, 3, 77, 96, torch.float16, torch.float16),
                                              (2, 6, 6, 64, 128, torch.bfloat16, torch.float32)):
        q = torch.randn(B, HQ, S, D, device=device, dtype=dtype)
        k = torch.randn(B, HKV, S, D, device=device, dtype=dtype)
        cos, sin = _kl_cos_sin(S, D, cs_dtype, device)
        q_out, k_out, _, _ = rope_forward(q, k, cos, sin)
        tag = f"{str(dtype)[6:]}_b{B}_hq{HQ}_hkv{HKV}_s{S}_d{D}"
        results[f"{tag}_q"] = q_out
        results[f"{tag}_k"] = k_out
    # cos/sin given as (seq, head_dim)
    B, HQ, HKV, S, D = 3, 4, 1, 50, 32
    q = torch.randn(B, HQ, S, D, device=device, dtype=torch.float16)
    k = torch.randn(B, HKV, S, D, device=device, dtype=torch.float16)
    cos, sin = _kl_cos_sin(S, D, torch.float16, device)
    q_out, k_out, _, _ = rope_forward(q, k, cos[0], sin[0])
    results["float16_b3_hq4_hkv1_s50_d32_2dcos_q"] = q_out
    results["float16_b3_hq4_hkv1_s50_d32_2dcos_k"] = k_out
    return results
