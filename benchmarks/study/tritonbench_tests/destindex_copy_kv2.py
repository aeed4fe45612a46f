import torch


def test_destindex_copy_kv():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # head_dim is the kernel's BLOCK_DMODEL (a tl.arange extent): a power of two; heads may be any count
    for seq, out_rows, heads, dim, dtype in ((1000, 2048, 12, 64, torch.float16),
                                             (777, 1000, 3, 128, torch.bfloat16),
                                             (512, 4096, 8, 32, torch.float32)):
        k = torch.randn(seq, heads, dim, device=device, dtype=dtype)
        dest = torch.randperm(out_rows, device=device)[:seq]  # unique destination slots
        out = torch.zeros(out_rows, heads, dim, device=device, dtype=dtype)
        destindex_copy_kv(k, dest, out)
        results[f"{str(dtype).split('.')[-1]}_s{seq}_rows{out_rows}_h{heads}_d{dim}"] = out
    return results
