import torch


def test_triton_llama_rmsnorm():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    cases = (
        ((3, 100, 700), torch.float16, 1e-6),
        ((256, 4096), torch.bfloat16, 1e-5),
        ((2, 50, 1000), torch.float32, 1e-6),
        ((33, 8192), torch.float16, 1e-6),
    )
    for shape, dtype, eps in cases:
        x = torch.randn(shape, device=device, dtype=dtype)
        w = (1.0 + 0.5 * torch.randn(shape[-1], device=device)).to(dtype)
        norm = TritonLlamaRMSNorm(w, eps=eps)
        results[f"{str(dtype).split('.')[-1]}_{'x'.join(map(str, shape))}"] = norm(x)
    return results
