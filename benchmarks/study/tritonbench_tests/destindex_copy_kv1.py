import torch


def test_destindex_copy_kv():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for seq, out_rows, heads, dim, dtype in ((1000, 2048, 12, 100, torch.float16),
                                             (2048, 4096, 8, 128, torch.float32)):
        k = torch.randn(seq, heads, dim, device=device, dtype=dtype)
        dest = torch.randperm(out_rows, device=device)[:seq]  # unique destination slots
        out = torch.zeros(out_rows, heads, dim, device=device, dtype=dtype)
        destindex_copy_kv(k, dest, out)
        results[f"{str(dtype).split('.')[-1]}_s{seq}_h{heads}_d{dim}"] = out
    return results
