import torch


def test_token_att_fwd2():
    # Decoding step with a sliding window: out[b, h] = sum_n prob[h, att_start_b + n] * v[slot_n, h // group]
    # over the last att_len_b = min(len_b, window) tokens of request B_req_idx[b], whose cache slots are
    # Req_to_tokens[req, len_b - att_len_b : len_b]; prob holds softmaxed scores, sequence b at B_Att_Start_Loc[b].
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    cases = (([300, 77, 1000, 1], 8, 2, 128, 256, torch.float16),
             ([129, 500], 4, 4, 64, 4096, torch.bfloat16),
             ([200, 64, 333], 4, 1, 64, 128, torch.float32))
    for seqlens, heads, kv_heads, d, window, dtype in cases:
        batch = len(seqlens)
        att_lens = [min(n, window) for n in seqlens]
        cache_tokens = sum(seqlens) + 64
        n_req = batch + 2
        req_to_tokens = torch.zeros(n_req, max(seqlens) + 32, device=device, dtype=torch.int32)
        b_req_idx = torch.randperm(n_req, device=device)[:batch].to(torch.int32)
        slots = torch.randperm(cache_tokens, device=device).to(torch.int32)
        start = 0
        for b, n in enumerate(seqlens):
            req_to_tokens[b_req_idx[b], :n] = slots[start:start + n]
            start += n
        b_seqlen = torch.tensor(seqlens, device=device, dtype=torch.int32)
        b_start_loc = torch.cumsum(b_seqlen, 0, dtype=torch.int32) - b_seqlen
        b_att_seqlen = torch.tensor(att_lens, device=device, dtype=torch.int32)
        b_att_start_loc = torch.cumsum(b_att_seqlen, 0, dtype=torch.int32) - b_att_seqlen
        scores = torch.randn(heads, sum(att_lens), device=device, dtype=torch.float32) * 2
        prob = torch.cat([torch.softmax(s, dim=-1) for s in scores.split(att_lens, dim=1)], dim=1).to(dtype)
        v = torch.randn(cache_tokens, kv_heads, d, device=device, dtype=dtype)
        out = torch.empty(batch, heads, d, device=device, dtype=dtype)
        token_att_fwd2(prob, v, out, req_to_tokens, b_req_idx, b_start_loc, b_seqlen, b_att_start_loc,
                       b_att_seqlen, window)
        results[f"{str(dtype).split('.')[-1]}_b{batch}h{heads}kv{kv_heads}d{d}_w{window}"] = out
    return results
