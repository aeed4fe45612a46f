import torch


def _kl_chunk_local_cumsum(g, BT):
    T = g.shape[-1]
    out = torch.empty_like(g)
    for s in range(0, T, BT):
        out[..., s:s + BT] = g[..., s:s + BT].cumsum(-1)
    return out


def test_chunk_fwd_o_fn():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for B, H, T, K, V, BT in ((2, 4, 300, 64, 64, 64), (2, 8, 1000, 128, 128, 64), (1, 2, 129, 100, 72, 32)):
        NT = (T + BT - 1) // BT
        q = torch.randn(B, H, T, K, device=device)
        k = torch.randn(B, H, T, K, device=device) / K ** 0.5
        v = torch.randn(B, H, T, V, device=device)
        h = torch.randn(B, H, NT * K, V, device=device) / K ** 0.5
        g = _kl_chunk_local_cumsum(torch.nn.functional.logsigmoid(torch.randn(B, H, T, device=device) + 3), BT)
        scale = K ** -0.5
        results[f"B{B}_H{H}_T{T}_K{K}_V{V}_BT{BT}"] = chunk_fwd_o_fn(h, q, k, v, g, BT, scale)
    return results
