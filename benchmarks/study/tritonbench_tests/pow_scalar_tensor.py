import torch


def test_pow_scalar_tensor():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    cases = [
        (2.0, 1000, torch.float32),
        (0.5, 100_003, torch.float32),
        (3.0, 1 << 20, torch.float32),
        (1.7, 65_537, torch.float16),
    ]
    for base, n, dtype in cases:
        x = torch.randn(n, device=device, dtype=dtype)
        out = torch.empty_like(x)
        pow_func_scalar_tensor_wrapper_rank_1(base, x, out0=out)
        results[f"{str(dtype).split('.')[-1]}_base{base}_n{n}"] = out
    return results
