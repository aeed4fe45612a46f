import torch


def test_rmsnorm_wrapper():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    cases = (
        (2, 64, 4096, torch.float16),
        (3, 77, 5000, torch.float16),
        (4, 100, 1000, torch.float32),
    )
    for batch, m, k, dtype in cases:
        x = torch.randn(batch, m, k, device=device, dtype=dtype)
        w = (1.0 + 0.5 * torch.randn(k, device=device)).to(dtype)
        key = f"{str(dtype).split('.')[-1]}_{batch}x{m}x{k}"
        results[key] = rmsnorm_wrapper(x, w, eps=1e-6)
    return results
