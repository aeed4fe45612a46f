import torch


def test_masked_select():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # same shape
    x = torch.randn(100_003, device=device)
    m = torch.rand(100_003, device=device) < 0.5
    results["fp32_n100003"] = masked_select(x, m)
    # 2-D with a broadcast mask row
    x = torch.randn(257, 1000, device=device)
    m = torch.rand(1000, device=device) < 0.3
    results["fp32_257x1000_bcast"] = masked_select(x, m)
    # fp16, sparse mask
    x = torch.randn(64, 4097, device=device, dtype=torch.float16)
    m = torch.rand(64, 4097, device=device) < 0.1
    results["fp16_64x4097"] = masked_select(x, m)
    return results
