import torch


def test_index_select_cat_bwd():
    # backward of out = source[index]: grad_source[index[i], :] = grad_output[i, :] (plain store, so the
    # indices are distinct); rows of grad_source not in index keep their initial zeros
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for rows, cols, n_idx, dtype in ((3000, 1000, 1200, torch.float32), (1000, 513, 777, torch.float16),
                                     (640, 1536, 640, torch.bfloat16)):
        grad_source = torch.zeros(rows, cols, device=device, dtype=dtype)
        index = torch.randperm(rows, device=device)[:n_idx]
        grad_output = torch.randn(n_idx, cols, device=device, dtype=dtype)
        index_select_cat_bwd(grad_source, index, grad_output)
        results[f"{str(dtype).split('.')[-1]}_{rows}x{cols}_idx{n_idx}"] = grad_source
    return results
