import torch


def test_token_att_fwd():
    # Decoding-step attention scores (lightllm layout): q [batch, q_heads, d]; k is the token cache
    # [cache_tokens, kv_heads, d]; sequence b's tokens are B_Loc[b, max_len - len_b : max_len]
    # (cache slots); its scores go to att_out[:, B_Start_Loc[b] : B_Start_Loc[b] + len_b].
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    cases = (([300, 77, 150, 1], 32, 8, 128, torch.float16), ([33, 128, 255], 16, 16, 64, torch.float32))
    for seqlens, q_heads, kv_heads, d, out_dtype in cases:
        batch, max_len, total = len(seqlens), max(seqlens), sum(seqlens)
        cache_tokens = total + 64
        q = torch.randn(batch, q_heads, d, device=device, dtype=torch.float16)
        k = torch.randn(cache_tokens, kv_heads, d, device=device, dtype=torch.float16)
        slots = torch.randperm(cache_tokens, device=device).to(torch.int32)
        b_loc = torch.zeros(batch, max_len, device=device, dtype=torch.int32)
        b_start_loc = torch.zeros(batch, device=device, dtype=torch.int32)
        start = 0
        for b, n in enumerate(seqlens):
            b_loc[b, max_len - n:] = slots[start:start + n]
            b_start_loc[b] = start
            start += n
        b_seqlen = torch.tensor(seqlens, device=device, dtype=torch.int32)
        att_out = torch.empty(q_heads, total, device=device, dtype=out_dtype)
        token_att_fwd(q, k, att_out, b_loc, b_start_loc, b_seqlen, max_len)
        results[f"fp16_b{batch}h{q_heads}kv{kv_heads}d{d}_max{max_len}_out{str(out_dtype)[6:]}"] = att_out
    return results
