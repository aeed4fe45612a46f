import torch


def test_argmax():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # fp32 random inputs: ties are practically impossible, so the index is well defined
    x = torch.randn(1000, 777, device=device, dtype=torch.float32)
    results["fp32_1000x777_all"] = argmax(x)
    x = torch.randn(300, 513, device=device, dtype=torch.float32)
    results["fp32_300x513_dim-1"] = argmax(x, dim=-1)
    x = torch.randn(64, 1000, 3, device=device, dtype=torch.float32)
    results["fp32_64x1000x3_dim1_keepdim"] = argmax(x, dim=1, keepdim=True)
    x = torch.randn(257, 130, device=device, dtype=torch.float32)
    results["fp32_257x130_dim0"] = argmax(x, dim=0)
    return results
