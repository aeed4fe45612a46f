import torch


def test_index_select_cat():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for rows, cols, n_idx, dtype in ((4096, 1000, 1200, torch.float32), (1000, 513, 777, torch.float16)):
        source = torch.randn(rows, cols, device=device, dtype=dtype)
        index = torch.randint(0, rows, (n_idx,), device=device, dtype=torch.int64)
        output = torch.empty(n_idx, cols, device=device, dtype=dtype)
        index_select_cat_fwd(output, source, index)
        results[f"{str(dtype).split('.')[-1]}_{rows}x{cols}_idx{n_idx}"] = output
    return results
