import torch


def test_context_attention_fwd():
    # Prefill with a prompt cache (lightllm layout): request b has b_seq_len[b] tokens, the first
    # b_prompt_cache_len[b] of them already in the KV cache; q / o hold only the new tokens, sequence b
    # at b_start_loc[b]. k / v are the KV cache [cache_tokens, kv_heads, d]; token n of request
    # b_req_idx[b] sits in cache slot req_to_token_indexs[b_req_idx[b], n]. Causal attention.
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    cases = (([200, 77, 130], [0, 30, 64], 8, 2, 64, torch.float16),
             ([300, 45], [100, 0], 4, 4, 80, torch.bfloat16),
             ([129, 256], [1, 128], 4, 1, 128, torch.float16))
    for seq_lens, cache_lens, heads, kv_heads, d, dtype in cases:
        batch = len(seq_lens)
        new_lens = [n - c for n, c in zip(seq_lens, cache_lens)]
        cache_tokens = sum(seq_lens) + 64
        n_req = batch + 2
        req_to_token = torch.zeros(n_req, max(seq_lens) + 16, device=device, dtype=torch.int32)
        b_req_idx = torch.randperm(n_req, device=device)[:batch].to(torch.int32)
        slots = torch.randperm(cache_tokens, device=device).to(torch.int32)
        start = 0
        for b, n in enumerate(seq_lens):
            req_to_token[b_req_idx[b], :n] = slots[start:start + n]
            start += n
        b_seq_len = torch.tensor(seq_lens, device=device, dtype=torch.int32)
        b_prompt_cache_len = torch.tensor(cache_lens, device=device, dtype=torch.int32)
        b_new_len = b_seq_len - b_prompt_cache_len
        b_start_loc = torch.cumsum(b_new_len, 0, dtype=torch.int32) - b_new_len
        q = torch.randn(sum(new_lens), heads, d, device=device, dtype=dtype)
        k = torch.randn(cache_tokens, kv_heads, d, device=device, dtype=dtype)
        v = torch.randn(cache_tokens, kv_heads, d, device=device, dtype=dtype)
        o = torch.empty_like(q)
        context_attention_fwd(q, k, v, o, b_req_idx, b_start_loc, b_seq_len, b_prompt_cache_len, max(seq_lens),
                              req_to_token)
        tag = f"{str(dtype).split('.')[-1]}_len{'-'.join(map(str, seq_lens))}_cache{'-'.join(map(str, cache_lens))}"
        results[f"{tag}_h{heads}kv{kv_heads}d{d}"] = o
    return results
