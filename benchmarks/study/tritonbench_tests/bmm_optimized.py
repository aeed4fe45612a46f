import torch


def test_bmm():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # batched (batch, M, K) @ (batch, K, N); ragged sizes exercise the M/N/K masks
    for (b, m, k, n), dtype in (((4, 256, 128, 192), torch.float16), ((3, 100, 77, 130), torch.float32),
                                ((2, 65, 300, 33), torch.bfloat16)):
        a = torch.randn(b, m, k, device=device, dtype=dtype)
        bb = torch.randn(b, k, n, device=device, dtype=dtype)
        results[f"{str(dtype)[6:]}_b{b}_m{m}_k{k}_n{n}"] = bmm(a, bb)
    # non-contiguous operand (the wrapper makes it contiguous)
    a = torch.randn(2, 96, 64, device=device, dtype=torch.float16)
    bb = torch.randn(2, 80, 64, device=device, dtype=torch.float16).transpose(1, 2)
    results["float16_b2_m96_k64_n80_bT"] = bmm(a, bb)
    return results
