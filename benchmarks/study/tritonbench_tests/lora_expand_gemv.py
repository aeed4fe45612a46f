import torch


def test_bgmv_expand():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    cases = [
        # batches, num_loras, rank K, hidden N, input dtype, lora dtype, add_inputs, 4-D weights
        # (grid = N x batches programs: keep N * batches moderate for the interpreter)
        (4, 3, 16, 768, torch.float16, torch.float16, True, False),
        (3, 4, 20, 1000, torch.float32, torch.float16, True, True),
        (4, 2, 64, 512, torch.bfloat16, torch.bfloat16, False, False),
        (2, 2, 8, 300, torch.float32, torch.bfloat16, False, True),
    ]
    for batches, num_loras, rank, n, in_dtype, w_dtype, add, four_d in cases:
        x = torch.randn(batches, rank, device=device, dtype=in_dtype)
        w = (torch.randn(num_loras, n, rank, device=device) / rank ** 0.5).to(w_dtype)
        if four_d:
            w = w.unsqueeze(1)  # (lora_num, 1, hidden, rank)
        out = torch.randn(batches, n, device=device, dtype=w_dtype)
        idx = torch.randint(-1, num_loras, (batches,), device=device)
        idx[0] = num_loras - 1  # at least one row uses a LoRA; -1 rows are skipped
        _bgmv_expand(x, w, out, idx, add_inputs=add)
        key = f"b{batches}_r{rank}_n{n}_{str(in_dtype).split('.')[-1]}_{str(w_dtype).split('.')[-1]}_add{int(add)}"
        results[key + ("_4d" if four_d else "")] = out
    return results
