import torch


def test_int_scaled_matmul():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    cfg = Config(num_warps=4, num_stages=2, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8)
    # plain int8 x int8 -> int32 matmul
    for m, n, k in ((256, 384, 512), (300, 200, 333)):
        a = torch.randint(-128, 128, (m, k), dtype=torch.int8, device=device)
        b = torch.randint(-128, 128, (k, n), dtype=torch.int8, device=device)
        c = torch.empty(m, n, dtype=torch.int32, device=device)
        results[f"int_mm_{m}x{n}x{k}"] = int_matmul_kernel(a, b, c, cfg)
    # row-scaled int8 matmul: c = (a @ b) * scales1[:, None], scales1 of shape (M, 1)
    for m, n, k, dtype in ((257, 384, 512, torch.float32), (512, 200, 333, torch.bfloat16)):
        a = torch.randint(-128, 128, (m, k), dtype=torch.int8, device=device)
        b = torch.randint(-128, 128, (k, n), dtype=torch.int8, device=device)
        scales1 = (torch.rand(m, 1, device=device) * 1e-3 + 1e-4).to(dtype)
        c = torch.empty(m, n, dtype=dtype, device=device)
        results[f"scaled_mm_{str(dtype).split('.')[-1]}_{m}x{n}x{k}"] = int_scaled_matmul_kernel(a, b, scales1, c, cfg)
    return results
