import torch


def _kl_cos_sin(seqlen_ro, rotary_dim, dtype, device):
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, rotary_dim, 2, device=device, dtype=torch.float32) / rotary_dim))
    t = torch.arange(seqlen_ro, device=device, dtype=torch.float32)
    freqs = torch.outer(t, inv_freq)
    return freqs.cos().to(dtype), freqs.sin().to(dtype)


def test_apply_rotary():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}

    # 1) fixed length, not interleaved, partial rotary dim (the tail is copied), fp16
    B, S, H, D, RD = 2, 300, 8, 64, 32
    x = torch.randn(B, S, H, D, device=device, dtype=torch.float16)
    cos, sin = _kl_cos_sin(640, RD, torch.float16, device)
    results["fp16_b2s300h8d64_rd32"] = apply_rotary(x, cos, sin)

    # 2) fixed length, interleaved, full rotary dim, per-sequence offsets (tensor), fp32
    B, S, H, D, RD = 3, 129, 4, 128, 128
    x = torch.randn(B, S, H, D, device=device, dtype=torch.float32)
    cos, sin = _kl_cos_sin(256, RD, torch.float32, device)
    offsets = torch.randint(0, 256 - S + 1, (B,), device=device, dtype=torch.int32)
    results["fp32_b3s129h4d128_interleaved_offsets"] = apply_rotary(x, cos, sin, seqlen_offsets=offsets,
                                                                    interleaved=True)

    # 3) variable length (cu_seqlens), not interleaved, conjugate, integer offset, bf16
    seqlens = [100, 37, 200]
    cu_seqlens = torch.tensor([0] + torch.tensor(seqlens).cumsum(0).tolist(), device=device, dtype=torch.int32)
    total, H, D, RD = sum(seqlens), 6, 96, 96
    x = torch.randn(total, H, D, device=device, dtype=torch.bfloat16)
    cos, sin = _kl_cos_sin(512, RD, torch.bfloat16, device)
    results["bf16_varlen337h6d96_conj_off5"] = apply_rotary(x, cos, sin, seqlen_offsets=5, cu_seqlens=cu_seqlens,
                                                           max_seqlen=max(seqlens), conjugate=True)

    # 4) in place, interleaved, partial rotary dim, fp16
    B, S, H, D, RD = 1, 77, 3, 128, 64
    x = torch.randn(B, S, H, D, device=device, dtype=torch.float16)
    cos, sin = _kl_cos_sin(160, RD, torch.float16, device)
    results["fp16_b1s77h3d128_rd64_interleaved_inplace"] = apply_rotary(x, cos, sin, interleaved=True, inplace=True)
    return results
