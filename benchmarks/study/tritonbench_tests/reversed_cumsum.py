import torch


def test_chunk_global_reversed_cumsum_vector():
    # z[b, h, t, :] = sum over t' >= t of s[b, h, t', :]
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for (B, H, T, S), dtype, out_dtype in (
        ((2, 3, 300, 100), torch.float32, None),
        ((1, 4, 1024, 64), torch.float32, None),
        ((2, 2, 257, 48), torch.float16, torch.float32),
        ((1, 2, 200, 32), torch.bfloat16, None),
    ):
        s = torch.randn(B, H, T, S, device=device, dtype=dtype)
        z = chunk_global_reversed_cumsum_vector(s, dtype=out_dtype)
        results[f"{str(dtype).split('.')[-1]}_B{B}_H{H}_T{T}_S{S}"] = z
    return results
