import torch


def test_rms_matmul_rbe():
    # out = (rmsnorm(x) * rms_w) @ weight.T, viewed as [batch, M, n_heads, head_dim].
    # K is a multiple of BLOCK_SIZE_K = 64 (the K loop is unmasked); M and N need not be.
    # An int8 weight holds float8 e5m2 bit patterns (the kernel bitcasts them), so the int8 case
    # builds weight and rms_w that way and decodes the int8 (e5m2-bit) output for comparison.
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for batch, M, K, n_heads, head_dim, use_rbe, start_pos in ((2, 100, 1024, 8, 64, False, 0),
                                                               (1, 16, 2048, 16, 128, True, 5)):
        N = n_heads * head_dim
        x = torch.randn(batch, M, K, device=device, dtype=torch.float16)
        weight = torch.randn(N, K, device=device, dtype=torch.float16) * K ** -0.5
        rms_w = torch.rand(K, device=device, dtype=torch.float16) + 0.5
        out = rms_matmul_rbe_wrapper(x, weight, rms_w, use_rbe, start_pos, n_heads, head_dim)
        results[f"fp16_b{batch}m{M}k{K}n{N}_rbe{int(use_rbe)}"] = out
    # float8 (e5m2) weights stored in int8 tensors
    batch, M, K, n_heads, head_dim = 2, 48, 1024, 4, 64
    N = n_heads * head_dim
    x = torch.randn(batch, M, K, device=device, dtype=torch.float16)
    weight = (torch.randn(N, K, device=device, dtype=torch.float16) * K ** -0.5).to(torch.float8_e5m2)
    rms_w = (torch.rand(K, device=device, dtype=torch.float16) + 0.5).to(torch.float8_e5m2)
    out = rms_matmul_rbe_wrapper(x, weight.view(torch.int8), rms_w.view(torch.int8), False, 0, n_heads, head_dim)
    results[f"fp8e5_b{batch}m{M}k{K}n{N}"] = out.view(torch.float8_e5m2).to(torch.float16)
    return results
