import torch


def test_triton_matmul():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for m, k, n in ((1024, 1024, 1024), (300, 250, 200), (512, 384, 777)):
        a = torch.randn(m, k, device=device, dtype=torch.float16)
        b = torch.randn(k, n, device=device, dtype=torch.float16)
        results[f"fp16_{m}x{k}x{n}"] = matmul(a, b)
    return results
