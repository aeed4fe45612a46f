import torch


def test_rms_matmul_rbe_qkv():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # K (= model dim) must be a multiple of BLOCK_SIZE_K (64): the kernel does not mask K.
    for batch, M, K, n_heads, head_dim, start_pos in ((1, 100, 256, 4, 64, 0), (2, 77, 512, 6, 80, 5)):
        N = n_heads * head_dim
        x = torch.randn(batch, M, K, device=device, dtype=torch.float16)
        wq = torch.randn(N, K, device=device, dtype=torch.float16) / K ** 0.5
        wk = torch.randn(N, K, device=device, dtype=torch.float16) / K ** 0.5
        wv = torch.randn(N, K, device=device, dtype=torch.float16) / K ** 0.5
        rms_w = 1.0 + 0.1 * torch.randn(K, device=device, dtype=torch.float16)
        k = torch.empty(batch, M, N, device=device, dtype=torch.float16)
        v = torch.empty(batch, M, N, device=device, dtype=torch.float16)
        q, k, v = rms_matmul_rbe_qkv_wrapper(x, start_pos, wq, wk, wv, rms_w, n_heads, head_dim, k, v)
        tag = f"b{batch}_m{M}_k{K}_h{n_heads}x{head_dim}"
        results[f"{tag}_q"] = q
        results[f"{tag}_k"] = k
        results[f"{tag}_v"] = v
    return results
