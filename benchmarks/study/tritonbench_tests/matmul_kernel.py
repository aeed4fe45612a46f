import torch


def test_matmul():
    # The reference kernel hard-codes N = K = 4096 (its loop bound and the row strides of a, b, c),
    # so N and K stay 4096; the row count M varies (a multiple of BLOCK_SIZE_M, no row mask).
    device = "cuda" if torch.cuda.is_available() else "cpu"
    N = K = 4096
    results = {}
    for M, bm, bn, bk in ((128, 64, 128, 64), (192, 64, 128, 64), (96, 32, 128, 64)):
        a = torch.randn((M, K), device=device, dtype=torch.float16)
        b = torch.randn((K, N), device=device, dtype=torch.float16)
        c = torch.empty((M, N), device=device, dtype=torch.float16)
        matmul(c, a, b, M, N, K, bm, bn, bk)
        results[f"fp16_{M}x{N}x{K}_b{bm}x{bn}x{bk}"] = c
    return results
