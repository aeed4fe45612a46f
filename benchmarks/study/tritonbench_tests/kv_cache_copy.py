import torch


def test_copy_kv_to_blocked_cache():
    # Decoding step: one new token per sequence is written into the slot (kv_length - 1) of its last
    # block. Caches start with random values so untouched slots must stay as they were.
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # (bsz, num_kv_heads, head_dim, block_size, max_blocks_per_seq, new k-cache layout, k/v have a seq dim)
    cases = ((7, 8, 128, 16, 8, False, True), (5, 3, 64, 32, 4, False, False), (6, 4, 128, 16, 8, True, True))
    for bsz, nh, hd, bs, mb, new_layout, seq_dim in cases:
        dtype = torch.float16
        num_blocks = bsz * mb + 3
        shape = (bsz, 1, nh, hd) if seq_dim else (bsz, nh, hd)
        k = torch.randn(shape, device=device, dtype=dtype)
        v = torch.randn(shape, device=device, dtype=dtype)
        if new_layout:
            x = 16 // torch.tensor([], dtype=dtype).element_size()
            k_cache = torch.randn(num_blocks, nh, hd // x, bs, x, device=device, dtype=dtype)
        else:
            k_cache = torch.randn(num_blocks, nh, bs, hd, device=device, dtype=dtype)
        v_cache = torch.randn(num_blocks, nh, bs, hd, device=device, dtype=dtype)
        block_tables = torch.randperm(num_blocks, device=device)[: bsz * mb].view(bsz, mb).to(torch.int32)
        kv_lengths = torch.randint(1, mb * bs + 1, (bsz,), device=device, dtype=torch.int32)
        copy_kv_to_blocked_cache(k, v, k_cache, v_cache, kv_lengths, block_tables,
                                 use_new_kcache_layout=new_layout)
        key = f"fp16_bsz{bsz}h{nh}d{hd}bs{bs}" + ("_newlayout" if new_layout else "")
        results[key + "_k_cache"] = k_cache
        results[key + "_v_cache"] = v_cache
    return results
