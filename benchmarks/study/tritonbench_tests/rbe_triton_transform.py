import torch


def test_rbe_triton_wrapper():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    cases = (
        (2, 64, 4096, 0, torch.float32),
        (3, 101, 384, 17, torch.float32),
        (2, 50, 1000, 5, torch.float16),
    )
    for batch, m, k, pos, dtype in cases:
        x = torch.randn(batch, m, k, device=device, dtype=dtype)
        key = f"{str(dtype).split('.')[-1]}_{batch}x{m}x{k}_pos{pos}"
        results[key] = rbe_triton_wrapper(x, pos)
    return results
