import math

import torch


def _kl_buffers(q):
    # running output / max / normaliser buffers of the multi-stage attention (rows rounded up to 64)
    z, h, n, d = q.shape
    n_round = math.ceil(n / 64) * 64
    o = torch.empty((z, h, n_round, d), device=q.device, dtype=torch.float32)
    m = torch.empty((z, h, n_round), device=q.device, dtype=torch.float32)
    l = torch.empty((z, h, n_round), device=q.device, dtype=torch.float32)
    return o, m, l


def test_attention_forward():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.float16
    results = {}

    # single stage: plain attention over all keys
    z, h, n, d = 2, 4, 256, 64
    q = torch.randn(z, h, n, d, device=device, dtype=dtype)
    k = torch.randn(z, h, n, d, device=device, dtype=dtype)
    v = torch.randn(z, h, n, d, device=device, dtype=dtype)
    o, m, l = _kl_buffers(q)
    o, m, l = _forward(q, k, v, 1.0 / math.sqrt(d), o, m, l, end=True, init=True)
    results["single_z2h4n256d64_o"] = o
    results["single_z2h4n256d64_lse2"] = m[:, :, :n].clone()

    # two stages (GQA, ragged lengths): local keys inside a sliding window, then context keys
    z, h, h_kv, n, n_local, n_ctx, d = 1, 4, 2, 200, 300, 150, 64
    q = torch.randn(z, h, n, d, device=device, dtype=dtype)
    k1 = torch.randn(z, h_kv, n_local, d, device=device, dtype=dtype)
    v1 = torch.randn(z, h_kv, n_local, d, device=device, dtype=dtype)
    k2 = torch.randn(z, h_kv, n_ctx, d, device=device, dtype=dtype)
    v2 = torch.randn(z, h_kv, n_ctx, d, device=device, dtype=dtype)
    sm_scale = 1.0 / math.sqrt(d)
    o, m, l = _kl_buffers(q)
    o, m, l = _forward(q, k1, v1, sm_scale, o, m, l, end=False, init=True,
                       sliding_window=(n_local - n, 128))
    o, m, l = _forward(q, k2, v2, sm_scale, o, m, l, end=True, init=False)
    results["two_stage_window_z1h4kv2n200_o"] = o
    results["two_stage_window_z1h4kv2n200_lse2"] = m[:, :, :n].clone()
    return results
