import torch


def test_matmul_autotune():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # (M, K, N, activation, B given transposed (non-contiguous)); the output is always fp16
    cases = (
        (512, 512, 512, "", False),
        (300, 250, 777, "leaky_relu", False),
        (257, 1000, 130, "", True),
    )
    for m, k, n, act, b_t in cases:
        a = torch.randn(m, k, device=device, dtype=torch.float16)
        b = torch.randn(n, k, device=device, dtype=torch.float16).t() if b_t else \
            torch.randn(k, n, device=device, dtype=torch.float16)
        key = f"fp16_{m}x{k}x{n}" + (f"_{act}" if act else "") + ("_bT" if b_t else "")
        results[key] = matmul(a, b, activation=act)
    return results
