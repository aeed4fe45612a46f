import torch
import torch.nn.functional as F


def _kl_chunk_cumsum(g, bt):
    # chunk-local cumulative sum of log-gates along T (chunks of bt steps), as the forward pass keeps them
    b, h, t = g.shape
    nt = (t + bt - 1) // bt
    g = F.pad(g, (0, nt * bt - t)).view(b, h, nt, bt).cumsum(-1)
    return g.view(b, h, nt * bt)[..., :t].contiguous()


def test_chunk_bwd_dqkg():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    BT = 64  # the wrapper's chunk size
    # K: a power of two (<= 64) or a multiple of 64 (the per-chunk state rows are K-strided); T and V ragged
    for B, H, T, K, V, dtype in ((2, 2, 200, 64, 100, torch.float32), (1, 3, 128, 128, 48, torch.float16),
                                 (2, 1, 77, 32, 64, torch.float16)):
        NT = (T + BT - 1) // BT
        q = torch.randn(B, H, T, K, device=device, dtype=dtype)
        k = torch.randn(B, H, T, K, device=device, dtype=dtype)
        v = torch.randn(B, H, T, V, device=device, dtype=dtype)
        do = torch.randn(B, H, T, V, device=device, dtype=dtype)
        g = _kl_chunk_cumsum(F.logsigmoid(torch.randn(B, H, T, device=device, dtype=torch.float32) + 4.0), BT)
        h = torch.randn(B, H, NT * K, V, device=device, dtype=dtype)
        dh = torch.randn(B, H, NT * K, V, device=device, dtype=dtype)
        dq, dk, dg = chunk_bwd_dqkg_fn(do, q, k, v, g, h, dh, K ** -0.5)
        tag = f"{str(dtype)[6:]}_b{B}h{H}t{T}k{K}v{V}"
        results[f"{tag}_dq"] = dq
        results[f"{tag}_dk"] = dk
        results[f"{tag}_dg"] = dg
    return results
