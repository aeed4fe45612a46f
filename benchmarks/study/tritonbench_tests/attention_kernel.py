import torch


def test_attention_rel_h_rel_w():
    # SAM-style attention with decomposed relative-position bias: rel_h_w[..., :64] is indexed by the
    # key block (BLOCK_N = 64 keys) and rel_h_w[..., 64:] by the key's position inside the block.
    # The kernel has no boundary checks, so the sequence length is a multiple of BLOCK_M and
    # BLOCK_N (320 = 5 x 64 is not a power of two) and at most 64 key blocks.
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for B, H, N, D, dtype, bm in ((1, 4, 1024, 64, torch.float16, 64), (1, 3, 320, 64, torch.bfloat16, 32)):
        q = torch.randn(B, H, N, D, device=device, dtype=dtype)
        k = torch.randn(B, H, N, D, device=device, dtype=dtype)
        v = torch.randn(B, H, N, D, device=device, dtype=dtype)
        rel_h_w = torch.randn(B, H, N, 128, device=device, dtype=dtype)
        o = torch.empty_like(q)
        _attention_rel_h_rel_w_kernel_aligned_device(q, k, v, rel_h_w, D ** -0.5, o, bm, 64, 4, 2)
        results[f"{str(dtype)[6:]}_b{B}h{H}n{N}d{D}"] = o
    return results
