import torch


def test_relu_forward_wrapper_rank_1():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    x = torch.randn(1_000_003, device=device, dtype=torch.float32)
    out = torch.empty_like(x)
    results["fp32_n1000003"] = relu_forward_wrapper_rank_1(x, out0=out)
    base = torch.randn(3 * 300_001, device=device, dtype=torch.float16)
    x = base[::3]  # strided (non-contiguous) input view
    out = torch.empty(x.shape, device=device, dtype=torch.float16)
    results["fp16_n300001_stride3"] = relu_forward_wrapper_rank_1(x, out0=out)
    return results
