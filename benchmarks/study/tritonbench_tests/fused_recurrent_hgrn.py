import torch


def test_fused_recurrent_hgrn():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for B, H, T, D, use_h0 in ((2, 2, 100, 200, False), (1, 2, 128, 300, True)):
        x = torch.randn(B, H, T, D, device=device, requires_grad=True)
        g = torch.sigmoid(torch.randn(B, H, T, D, device=device) + 2).requires_grad_(True)
        h0 = torch.randn(B, H, D, device=device) if use_h0 else None
        o, ht = fused_recurrent_hgrn(x, g, h0, output_final_state=True)
        o.backward(torch.randn_like(o))
        tag = f"B{B}_H{H}_T{T}_D{D}{'_h0' if use_h0 else ''}"
        results[f"{tag}_o"] = o.detach()
        results[f"{tag}_ht"] = ht.detach()
        results[f"{tag}_dx"] = x.grad
        results[f"{tag}_dg"] = g.grad
    return results
