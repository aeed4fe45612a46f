import torch


def test_softmax():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    x = torch.randn(300, 1000, device=device)
    results["fp32_300x1000"] = softmax(x)
    x = torch.randn(4, 128, 512, device=device) * 3
    results["fp32_4x128x512"] = softmax(x)
    x = torch.randn(2, 100, 781, device=device, dtype=torch.float16)
    mask = torch.randn(2, 100, 781, device=device, dtype=torch.float16)
    results["fp16_2x100x781_mask"] = softmax(x, mask)
    x = torch.randn(512, 3000, device=device)
    mask = torch.where(torch.rand(512, 3000, device=device) < 0.2, -10000.0, 0.0)
    results["fp32_512x3000_mask"] = softmax(x, mask)
    return results
