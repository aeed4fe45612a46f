import torch


def test_triton_attention():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # The kernels use 128-row tiles without row masks over the flattened (Z*H*N_CTX) rows, so the
    # sequence length stays a multiple of 128 (384 is not a power of two); head dim 64, fp16.
    for z, h, n_ctx, d in ((2, 3, 384, 64), (1, 4, 256, 64)):
        q = (0.5 * torch.randn(z, h, n_ctx, d, device=device)).to(torch.float16).requires_grad_(True)
        k = (0.5 * torch.randn(z, h, n_ctx, d, device=device)).to(torch.float16).requires_grad_(True)
        v = torch.randn(z, h, n_ctx, d, device=device).to(torch.float16).requires_grad_(True)
        sm_scale = d ** -0.5
        o = attention(q, k, v, sm_scale)
        do = torch.randn_like(o)
        o.backward(do)
        key = f"fp16_{z}x{h}x{n_ctx}x{d}"
        results[key + "_out"] = o.detach()
        results[key + "_dq"] = q.grad
        results[key + "_dk"] = k.grad
        results[key + "_dv"] = v.grad
    return results
