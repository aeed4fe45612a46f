import torch


def test_parallel_rebased():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for (b, h, t, d), dtype in (((2, 4, 256, 64), torch.float32), ((1, 2, 300, 32), torch.float16)):
        tag = f"{str(dtype).split('.')[-1]}_b{b}h{h}t{t}d{d}"
        q = torch.randn(b, h, t, d, device=device, dtype=dtype).requires_grad_(True)
        k = torch.randn(b, h, t, d, device=device, dtype=dtype).requires_grad_(True)
        v = torch.randn(b, h, t, d, device=device, dtype=dtype).requires_grad_(True)
        o = parallel_rebased(q, k, v)
        do = torch.randn_like(o)
        o.backward(do)
        results[f"{tag}_o"] = o.detach()
        results[f"{tag}_dq"] = q.grad
        results[f"{tag}_dk"] = k.grad
        results[f"{tag}_dv"] = v.grad
    q = torch.randn(1, 2, 200, 64, device=device, dtype=torch.float32)
    k = torch.randn(1, 2, 200, 64, device=device, dtype=torch.float32)
    v = torch.randn(1, 2, 200, 64, device=device, dtype=torch.float32)
    o, z = parallel_rebased(q, k, v, use_scale=True, return_both=True)
    results["fp32_b1h2t200d64_both_o"] = o
    results["fp32_b1h2t200d64_both_z"] = z
    return results
