import torch


def _kl_with_non_finite(n, dtype, device):
    x = (torch.randn(n, device=device) * 100).to(dtype)
    r = torch.rand(n, device=device)
    x[r < 0.05] = float("inf")
    x[(r >= 0.05) & (r < 0.1)] = -float("inf")
    x[(r >= 0.1) & (r < 0.15)] = float("nan")
    return x


def test_isfinite():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # rank-1 inputs; fp64 uses isfinited, the other float types are checked as fp32
    for n, dtype in ((1000003, torch.float32), (4097, torch.float64), (30011, torch.float16), (777, torch.bfloat16)):
        x = _kl_with_non_finite(n, dtype, device)
        out = torch.empty(n, device=device, dtype=torch.bool)
        isfinite_func_wrapper_rank_1(x, out0=out)
        results[f"{str(dtype).split('.')[-1]}_{n}"] = out
    # strided (non-contiguous) input view
    x = _kl_with_non_finite(3 * 5000, torch.float32, device)[::3]
    out = torch.empty(5000, device=device, dtype=torch.bool)
    isfinite_func_wrapper_rank_1(x, out0=out)
    results["float32_5000_stride3"] = out
    return results
