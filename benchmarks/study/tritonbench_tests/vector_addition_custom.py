import torch


def test_custom_add():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # 1-D vectors (the wrapper sizes the launch from dim 0); lengths not multiples of the block
    for n, dtype in ((10007, torch.float32), (4096, torch.float16), (33, torch.float32)):
        a = torch.randn(n, device=device, dtype=dtype)
        b = torch.randn(n, device=device, dtype=dtype)
        results[f"{str(dtype)[6:]}_{n}"] = custom_add(a, b)
    a = torch.randint(-1000, 1000, (777,), device=device, dtype=torch.int32)
    b = torch.randint(-1000, 1000, (777,), device=device, dtype=torch.int32)
    results["int32_777"] = custom_add(a, b)
    return results
