import torch


def _kl_paged_setup(q_lens, kv_lens, block_size, num_blocks, device):
    # packed query tokens (q_start_loc), and a random page table with distinct physical blocks per sequence
    q_seq_length = torch.tensor(q_lens, device=device, dtype=torch.int32)
    kv_seq_length = torch.tensor(kv_lens, device=device, dtype=torch.int32)
    q_start_loc = torch.zeros_like(q_seq_length)
    q_start_loc[1:] = torch.cumsum(q_seq_length, 0)[:-1]
    max_blocks = max((n + block_size - 1) // block_size for n in kv_lens)
    perm = torch.randperm(num_blocks)[: len(kv_lens) * max_blocks]
    block_offsets = perm.view(len(kv_lens), max_blocks).to(device=device, dtype=torch.int32)
    return q_start_loc, q_seq_length, kv_seq_length, block_offsets


def test_fill_kv_cache():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # q_lens: new tokens per sequence; kv_lens: history + new (prefill, decode, chunked prefill)
    q_lens, kv_lens = [37, 1, 50], [37, 20, 87]

    # plain copy into the paged caches: fp16 with ragged head sizes, bf16 with larger blocks
    for block_size, num_heads, head_dim, head_dim_v, dtype in ((16, 6, 80, 64, torch.float16),
                                                               (32, 4, 128, 128, torch.bfloat16)):
        num_blocks = 24
        q_start_loc, q_seq_length, kv_seq_length, block_offsets = _kl_paged_setup(q_lens, kv_lens, block_size,
                                                                                  num_blocks, device)
        total = sum(q_lens)
        k_states = torch.randn(total, num_heads, head_dim, device=device, dtype=dtype)
        v_states = torch.randn(total, num_heads, head_dim_v, device=device, dtype=dtype)
        k_caches = torch.randn(num_blocks, block_size, num_heads, head_dim, device=device, dtype=dtype)
        v_caches = torch.randn(num_blocks, block_size, num_heads, head_dim_v, device=device, dtype=dtype)
        fill_kv_cache(k_states, v_states, k_caches, v_caches, q_start_loc, q_seq_length, kv_seq_length,
                      max(q_lens), block_offsets)
        tag = f"{str(dtype)[6:]}_bs{block_size}_h{num_heads}_d{head_dim}_dv{head_dim_v}"
        results[f"{tag}_k_caches"] = k_caches
        results[f"{tag}_v_caches"] = v_caches

    # fused int8 / int4 quantisation (per token and head: uint8 codes + scale/zero pairs)
    for quant_policy, block_size, num_heads, head_dim in ((8, 16, 3, 64), (4, 16, 5, 128)):
        num_blocks = 24
        dtype = torch.float16
        q_start_loc, q_seq_length, kv_seq_length, block_offsets = _kl_paged_setup(q_lens, kv_lens, block_size,
                                                                                  num_blocks, device)
        total = sum(q_lens)
        packed = head_dim if quant_policy == 8 else head_dim // 2
        k_states = torch.randn(total, num_heads, head_dim, device=device, dtype=dtype)
        v_states = torch.randn(total, num_heads, head_dim, device=device, dtype=dtype)
        k_caches = torch.randint(0, 256, (num_blocks, block_size, num_heads, packed), device=device,
                                 dtype=torch.uint8)
        v_caches = torch.randint(0, 256, (num_blocks, block_size, num_heads, packed), device=device,
                                 dtype=torch.uint8)
        k_scales_zeros = torch.randn(num_blocks, block_size, num_heads, 2, device=device, dtype=dtype)
        v_scales_zeros = torch.randn(num_blocks, block_size, num_heads, 2, device=device, dtype=dtype)
        fill_kv_cache(k_states, v_states, k_caches, v_caches, q_start_loc, q_seq_length, kv_seq_length,
                      max(q_lens), block_offsets, k_scales_zeros=k_scales_zeros, v_scales_zeros=v_scales_zeros,
                      quant_policy=quant_policy)
        tag = f"int{quant_policy}_bs{block_size}_h{num_heads}_d{head_dim}"
        results[f"{tag}_k_caches"] = k_caches
        results[f"{tag}_v_caches"] = v_caches
        results[f"{tag}_k_scales_zeros"] = k_scales_zeros
        results[f"{tag}_v_scales_zeros"] = v_scales_zeros
    return results
