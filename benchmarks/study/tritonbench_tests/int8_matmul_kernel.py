import torch


def test_int8_matmul():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # K must be a multiple of 4 * BLOCK_SIZE_K for every autotune config (512); the weight matrix
    # holds four 2-bit values per uint8, so it has K // 4 rows.
    for m, k, n in ((512, 1024, 512), (300, 512, 200)):
        a = torch.randint(-128, 128, (m, k), device=device, dtype=torch.int8)
        b = torch.randint(0, 256, (k // 4, n), device=device, dtype=torch.uint8)
        results[f"int8_{m}x{k}x{n}"] = matmul(a, b)
    return results
