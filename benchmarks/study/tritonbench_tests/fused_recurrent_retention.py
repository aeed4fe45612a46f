import torch


def test_fused_recurrent_retention():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # (B, H, T, DK, DV, with initial/final state)
    for B, H, T, DK, DV, use_state in ((2, 2, 128, 32, 32, False), (1, 2, 64, 48, 80, True)):
        q = torch.randn(B, H, T, DK, device=device, dtype=torch.float32).requires_grad_()
        k = torch.randn(B, H, T, DK, device=device, dtype=torch.float32).requires_grad_()
        v = torch.randn(B, H, T, DV, device=device, dtype=torch.float32).requires_grad_()
        h0 = torch.randn(B, H, DK, DV, device=device, dtype=torch.float32) if use_state else None
        do = torch.randn(B, H, T, DV, device=device, dtype=torch.float32)
        o, final_state = fused_recurrent_retention(q, k, v, initial_state=h0, output_final_state=use_state)
        o.backward(do)
        key = f"fp32_b{B}h{H}t{T}dk{DK}dv{DV}" + ("_state" if use_state else "")
        results[key + "_o"] = o.detach()
        if use_state:
            results[key + "_final_state"] = final_state.detach()
        results[key + "_dq"] = q.grad
        results[key + "_dk"] = k.grad
        results[key + "_dv"] = v.grad
    return results
