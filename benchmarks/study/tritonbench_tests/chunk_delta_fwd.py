import torch


def _kl_unit_rows(x):
    return x / x.norm(dim=-1, keepdim=True)


def test_chunk_fwd_h_fn():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # (B, H, T, K, V, BT, dtype, with initial state); K <= 256 (one K block); T need not be a multiple of BT
    cases = (
        (2, 8, 1024, 64, 64, 64, torch.float32, True),
        (1, 4, 500, 100, 128, 64, torch.float32, False),
        (2, 4, 384, 128, 64, 32, torch.float16, True),
    )
    for b, h, t, k_dim, v_dim, bt, dtype, use_h0 in cases:
        # unit-norm keys and down-weighted w keep the delta-rule recurrence bounded
        k = _kl_unit_rows(torch.randn(b, h, t, k_dim, device=device)).to(dtype)
        w = (_kl_unit_rows(torch.randn(b, h, t, k_dim, device=device))
             * (0.5 * torch.rand(b, h, t, 1, device=device))).to(dtype)
        u = torch.randn(b, h, t, v_dim, device=device).to(dtype)
        h0 = torch.randn(b, h, k_dim, v_dim, device=device, dtype=torch.float32) if use_h0 else None
        final_state = torch.empty(b, h, k_dim, v_dim, device=device, dtype=torch.float32)
        hs, v_new = chunk_fwd_h_fn(k, w, u, bt, h0, final_state)
        key = f"{str(dtype).split('.')[-1]}_{b}x{h}x{t}x{k_dim}x{v_dim}_bt{bt}" + ("_h0" if use_h0 else "")
        results[key + "_h"] = hs
        results[key + "_v_new"] = v_new
        results[key + "_final_state"] = final_state
    return results
