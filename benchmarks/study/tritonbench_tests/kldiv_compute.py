import torch


def test_kldivergence():
    # element-wise x * log(x / y) for positive x, y (e.g. probabilities)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for shape in ((1 << 16,), (100003,), (257, 1000)):
        x = torch.rand(shape, device=device, dtype=torch.float32) + 0.01
        y = torch.rand(shape, device=device, dtype=torch.float32) + 0.01
        results["fp32_" + "x".join(str(s) for s in shape)] = kldivergence(x, y)
    # probability distributions along the last dimension
    x = torch.softmax(torch.randn(64, 1000, device=device), dim=-1)
    y = torch.softmax(torch.randn(64, 1000, device=device), dim=-1)
    results["fp32_softmax_64x1000"] = kldivergence(x, y)
    return results
