import torch


def test_matmul():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # one program computes the whole product (block sizes = the full sizes): power-of-two sizes >= 16
    for (m, k, n), dtype in (((64, 32, 128), torch.float32), ((16, 64, 32), torch.float16),
                             ((32, 128, 64), torch.float16), ((128, 16, 16), torch.float32)):
        x = torch.randn(m, k, device=device, dtype=dtype)
        y = torch.randn(k, n, device=device, dtype=dtype)
        results[f"{str(dtype)[6:]}_{m}x{k}x{n}"] = matmul(x, y)
    return results
