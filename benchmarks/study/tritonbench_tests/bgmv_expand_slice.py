import torch


def test_bgmv_expand_slice():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    cases = [
        # batches, num_loras, rank K, slice N, hidden, slice_offset, input dtype, lora dtype, add_inputs
        # (grid = N x batches programs: keep N * batches moderate for the interpreter)
        (4, 3, 16, 192, 768, 256, torch.float16, torch.float16, True),
        (4, 4, 20, 200, 1000, 600, torch.float32, torch.float16, True),
        (4, 2, 64, 128, 512, 0, torch.float16, torch.float16, False),
    ]
    for batches, num_loras, rank, n, hidden, off, in_dtype, w_dtype, add in cases:
        x = torch.randn(batches, rank, device=device, dtype=in_dtype)
        w = (torch.randn(num_loras, n, rank, device=device) / rank ** 0.5).to(w_dtype)
        out = torch.randn(batches, hidden, device=device, dtype=w_dtype)
        idx = torch.randint(-1, num_loras, (batches,), device=device)
        idx[0] = num_loras - 1  # at least one row uses a LoRA; -1 rows are skipped
        _bgmv_expand_slice(x, w, out, idx, off, n, add_inputs=add)
        results[f"b{batches}_r{rank}_n{n}_off{off}_{str(in_dtype).split('.')[-1]}_add{int(add)}"] = out
    return results
