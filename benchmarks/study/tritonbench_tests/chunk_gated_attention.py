import torch
import torch.nn.functional as F


def test_chunk_gated_abc_fwd():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    BT = 64
    # gate on the keys (GATEK=True, g is (B, H, T, K)) and on the values (GATEK=False, g is (B, H, T, V));
    # T a multiple of BT when the final state is stored (the last chunk's gate is read at row i_t*BT+BT-1)
    for B, H, T, K, V, dtype, gatek, states in ((2, 2, 200, 100, 64, torch.float16, True, False),
                                                (1, 3, 128, 64, 80, torch.float16, False, True),
                                                (2, 2, 192, 32, 48, torch.float32, True, True),
                                                (1, 2, 130, 48, 128, torch.float16, False, False)):
        BK = min(64, 1 << (K - 1).bit_length())
        BV = min(64, 1 << (V - 1).bit_length())
        S = K if gatek else V
        q = torch.randn(B, H, T, K, device=device, dtype=dtype)
        k = torch.randn(B, H, T, K, device=device, dtype=dtype)
        v = torch.randn(B, H, T, V, device=device, dtype=dtype)
        g_log = F.logsigmoid(torch.randn(B, H, T, S, device=device, dtype=torch.float32) + 4.0).to(dtype)
        g = fwd_pre(g_log, B, H, T, S, BT)
        h0 = ht = None
        if states:
            h0 = torch.randn(B, H, K, V, device=device, dtype=torch.float32)
            ht = torch.empty(B, H, K, V, device=device, dtype=torch.float32)
        h = fwd_inner(q, k, v, g, B, H, T, K, V, BT, BK, BV, gatek=gatek, h0=h0, ht=ht)
        tag = f"{str(dtype)[6:]}_b{B}h{H}t{T}k{K}v{V}_{'gatek' if gatek else 'gatev'}"
        results[f"{tag}_gcum"] = g
        results[f"{tag}_h"] = h
        if states:
            results[f"{tag}_ht"] = ht
    return results
