import torch


def test_fast_rms_layernorm():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for shape, dtype, gemma in (((256, 1000), torch.float32, False),
                                ((2, 200, 2048), torch.float16, False),
                                ((300, 777), torch.float32, True)):
        dim = shape[-1]
        layernorm = torch.nn.Module()
        layernorm.weight = torch.nn.Parameter(torch.randn(dim, device=device, dtype=dtype))
        layernorm.eps = 1e-6
        x = torch.randn(*shape, device=device, dtype=dtype).requires_grad_(True)
        y = fast_rms_layernorm(layernorm, x, gemma=gemma)
        dy = torch.randn(*shape, device=device, dtype=dtype)
        y.backward(dy)
        tag = f"{str(dtype).split('.')[-1]}_{'x'.join(map(str, shape))}{'_gemma' if gemma else ''}"
        results[f"{tag}_y"] = y.detach()
        results[f"{tag}_dx"] = x.grad
    return results
