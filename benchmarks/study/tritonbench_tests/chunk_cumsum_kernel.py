import torch


def test_chunk_global_cumsum_scalar():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # (B, H, T, input dtype, output dtype or None for the input's); T need not be a multiple of BT
    cases = (
        (4, 16, 2000, torch.float32, None),
        (1, 3, 1000, torch.float16, torch.float32),
        (3, 2, 257, torch.bfloat16, None),
        (2, 2, 64, torch.float32, None),
    )
    for b, h, t, dtype, out_dtype in cases:
        s = torch.randn(b, h, t, device=device, dtype=dtype)
        key = f"{str(dtype).split('.')[-1]}_{b}x{h}x{t}" + (f"_to_{str(out_dtype).split('.')[-1]}" if out_dtype else "")
        results[key] = chunk_global_cumsum_scalar(s, dtype=out_dtype)
    return results
