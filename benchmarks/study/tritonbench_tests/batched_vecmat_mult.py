import torch


def test_batched_vecmat():
    # The reference wrapper draws A [M, K] and B [M, N, K] itself (torch.randn on 'cuda', A first)
    # and returns output[m, n] = sum_k A[m, k] * B[m, n, k]; M, N, K must be multiples of the blocks.
    results = {}
    for M, N, K, bm, bn, bk in ((256, 256, 512, 16, 32, 64), (96, 48, 192, 16, 16, 64)):
        results[f"fp32_m{M}n{N}k{K}_b{bm}x{bn}x{bk}"] = batched_vecmat(M, N, K, bm, bn, bk)
    return results
