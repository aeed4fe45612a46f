import torch


def test_liger_layer_norm():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # (input shape, dtype); the last dimension is the normalised one
    cases = (((4, 128, 1000), torch.float32), ((512, 2048), torch.float32), ((300, 768), torch.bfloat16))
    for shape, dtype in cases:
        n = shape[-1]
        x = torch.randn(shape, device=device, dtype=dtype).requires_grad_(True)
        w = (1.0 + 0.1 * torch.randn(n, device=device)).to(dtype).requires_grad_(True)
        b = (0.1 * torch.randn(n, device=device)).to(dtype).requires_grad_(True)
        y = LigerLayerNormFunction.apply(x, w, b, 1e-6)
        dy = torch.randn_like(y)
        y.backward(dy)
        key = f"{str(dtype).split('.')[-1]}_" + "x".join(str(s) for s in shape)
        results[key + "_y"] = y.detach()
        results[key + "_dx"] = x.grad
        results[key + "_dw"] = w.grad
        results[key + "_db"] = b.grad
    return results
