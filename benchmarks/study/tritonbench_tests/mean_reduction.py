import torch


def test_mean_dim():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    x = torch.randn(512, 1000, device=device, dtype=torch.float32)
    results["fp32_512x1000_dim1"] = mean_dim(x, 1)
    x = torch.randn(8, 300, 64, device=device, dtype=torch.float32)
    results["fp32_8x300x64_dim02"] = mean_dim(x, [0, 2])
    x = torch.randn(4, 257, 96, device=device, dtype=torch.float16)
    results["fp16_4x257x96_dim1_keepdim"] = mean_dim(x, 1, keepdim=True)
    return results
