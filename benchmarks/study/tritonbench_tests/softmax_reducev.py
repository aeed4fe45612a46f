import torch


def test_token_softmax_reducev_fwd():
    # Decoding step: o[b, h] = softmax(logics[h, start_b : start_b + len_b]) @ v[tokens of b, h], where
    # logics is [heads, total_tokens] (sequence b at B_Start_Loc[b]), v is the token cache
    # [cache_tokens, heads, d] and sequence b's cache slots are b_loc[b, max_len - len_b : max_len].
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    cases = (([300, 77, 150, 1], 8, 128, torch.float16), ([33, 128, 255], 4, 64, torch.float32))
    for seqlens, heads, d, dtype in cases:
        batch, max_len, total = len(seqlens), max(seqlens), sum(seqlens)
        cache_tokens = total + 64
        logics = torch.randn(heads, total, device=device, dtype=dtype) * 3
        v = torch.randn(cache_tokens, heads, d, device=device, dtype=dtype)
        slots = torch.randperm(cache_tokens, device=device).to(torch.int32)
        b_loc = torch.zeros(batch, max_len, device=device, dtype=torch.int32)
        b_start_loc = torch.zeros(batch, device=device, dtype=torch.int32)
        start = 0
        for b, n in enumerate(seqlens):
            b_loc[b, max_len - n:] = slots[start:start + n]
            b_start_loc[b] = start
            start += n
        b_seq_len = torch.tensor(seqlens, device=device, dtype=torch.int32)
        o = torch.empty(batch, heads, d, device=device, dtype=dtype)
        # other_kv_index: a valid cache slot read (with zero weight) by the masked lanes
        token_softmax_reducev_fwd(logics, v, o, b_loc, b_start_loc, b_seq_len, max_len, int(slots[-1]))
        results[f"{str(dtype).split('.')[-1]}_b{batch}h{heads}d{d}_max{max_len}"] = o
    return results
