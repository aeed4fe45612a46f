import torch


def test_per_block_int8():
    # q and k have the same shape (the reference allocates k_int8 like q_int8); the head dim is a
    # power of two (tl.arange over it); the sequence length need not be a multiple of the blocks.
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for B, H, L, C in ((2, 4, 300, 64), (1, 2, 1024, 128)):
        q = torch.randn(B, H, L, C, device=device, dtype=torch.float16)
        k = torch.randn(B, H, L, C, device=device, dtype=torch.float16)
        q_int8, q_scale, k_int8, k_scale = per_block_int8(q, k)
        key = f"fp16_b{B}h{H}l{L}c{C}"
        results[key + "_q_int8"] = q_int8
        results[key + "_q_scale"] = q_scale
        results[key + "_k_int8"] = k_int8
        results[key + "_k_scale"] = k_scale
    # 3-D input [batch*heads, L, C] with custom block sizes
    q = torch.randn(6, 200, 64, device=device, dtype=torch.float16)
    k = torch.randn(6, 200, 64, device=device, dtype=torch.float16)
    q_int8, q_scale, k_int8, k_scale = per_block_int8(q, k, BLKQ=64, BLKK=32)
    results["fp16_3d_b6l200c64_q_int8"] = q_int8
    results["fp16_3d_b6l200c64_q_scale"] = q_scale
    results["fp16_3d_b6l200c64_k_int8"] = k_int8
    results["fp16_3d_b6l200c64_k_scale"] = k_scale
    return results
