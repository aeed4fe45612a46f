import torch


def test_context_attention_fwd_ppl_int8kv():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.float16
    results = {}
    # Prefill with a prompt cache: batch b has b_seq_len[b] tokens in total, of which the first
    # b_prompt_cache_len[b] are already in the K/V cache; q/o hold only the new tokens, packed
    # back to back (b_start_loc). K/V: [batch, kv_heads, max_len, head_dim]. Causal over all keys.
    # (total lengths, cached lengths, heads, kv heads, head_dim)
    cases = (
        ([100, 257, 31], [0, 64, 17], 4, 4, 64),
        ([300, 129], [40, 0], 8, 2, 128),
    )
    for seq_lens, cache_lens, h, h_kv, d in cases:
        new_lens = [s - c for s, c in zip(seq_lens, cache_lens)]
        b_seq_len = torch.tensor(seq_lens, device=device, dtype=torch.int32)
        b_prompt_cache_len = torch.tensor(cache_lens, device=device, dtype=torch.int32)
        b_start_loc = torch.zeros_like(b_seq_len)
        b_start_loc[1:] = torch.cumsum(torch.tensor(new_lens, device=device, dtype=torch.int32), 0)[:-1]
        total = sum(new_lens)
        q = torch.randn(total, h, d, device=device, dtype=dtype)
        k = torch.randn(len(seq_lens), h_kv, max(seq_lens), d, device=device, dtype=dtype)
        v = torch.randn(len(seq_lens), h_kv, max(seq_lens), d, device=device, dtype=dtype)
        o = torch.empty_like(q)
        context_attention_fwd_ppl_int8kv(q, k, v, o, b_start_loc, b_seq_len, max(new_lens), b_prompt_cache_len)
        key = f"fp16_lens{'-'.join(map(str, seq_lens))}_cache{'-'.join(map(str, cache_lens))}_h{h}kv{h_kv}_d{d}"
        results[key] = o
    return results
