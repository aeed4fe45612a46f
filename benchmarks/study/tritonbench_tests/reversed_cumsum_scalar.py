import torch


def test_chunk_global_reversed_cumsum_scalar():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for (B, H, T), dtype, out_dtype in (
        ((2, 3, 1000), torch.float32, None),
        ((4, 8, 4096), torch.float32, None),
        ((2, 4, 777), torch.float16, torch.float32),
    ):
        s = torch.randn(B, H, T, device=device, dtype=dtype)
        z = chunk_global_reversed_cumsum_scalar(s, dtype=out_dtype)
        results[f"{str(dtype).split('.')[-1]}_B{B}_H{H}_T{T}"] = z
    return results
