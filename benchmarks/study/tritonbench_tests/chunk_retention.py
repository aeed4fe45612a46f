import torch


def test_chunk_retention():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # Forward only: the reference backward reads a mostly unwritten dh buffer (torch.empty), so its
    # gradients change from run to run and cannot be compared.
    # (B, H, T, K, V, with initial state); T need not be a multiple of the 64-step chunk
    cases = ((4, 8, 1024, 64, 64, False), (2, 4, 500, 100, 128, True))
    for b, h, t, k_dim, v_dim, use_h0 in cases:
        q = torch.randn(b, h, t, k_dim, device=device, dtype=torch.float32)
        k = torch.randn(b, h, t, k_dim, device=device, dtype=torch.float32) * k_dim ** -0.5
        v = torch.randn(b, h, t, v_dim, device=device, dtype=torch.float32)
        h0 = torch.randn(b, h, k_dim, v_dim, device=device, dtype=torch.float32) if use_h0 else None
        o, final_state = chunk_retention(q, k, v, initial_state=h0, output_final_state=True)
        key = f"fp32_{b}x{h}x{t}x{k_dim}x{v_dim}" + ("_h0" if use_h0 else "")
        results[key + "_o"] = o
        results[key + "_final_state"] = final_state
    return results
