import torch


def _kl_to_int32(words):
    # int64 words holding 32-bit patterns -> int32 with the same bits
    return torch.where(words >= 2**31, words - 2**32, words).to(torch.int32)


def _kl_pack_int4(K, N, group_size, device):
    # Packed layout of quantize_int4: weight [K // 8, N] int32 (8 nibbles along K per word),
    # scale [K // group_size, N], zero point [K // group_size, N // 8] int32 (8 nibbles along N).
    q = torch.randint(0, 16, (K // 8, 8, N), device=device, dtype=torch.int64)
    zp = torch.randint(0, 16, (K // group_size, N // 8, 8), device=device, dtype=torch.int64)
    shifts = torch.arange(8, device=device, dtype=torch.int64) * 4
    qw = _kl_to_int32((q << shifts.view(1, 8, 1)).sum(1))
    zw = _kl_to_int32((zp << shifts.view(1, 1, 8)).sum(2))
    scale = (torch.rand(K // group_size, N, device=device) * 0.02 + 0.005).to(torch.float16)
    return qw, scale, zw


def test_matmul_dequantize_int4_s1():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for M, K, N, group_size in ((100, 512, 256, 128), (257, 1024, 1000, 64), (512, 2048, 1024, 128)):
        a = torch.randn(M, K, device=device, dtype=torch.float16)
        b, b_scale, b_zp = _kl_pack_int4(K, N, group_size, device)
        out = matmul_dequantize_int4_s1(a, b, b_scale, b_zp, group_size)
        results[f"fp16_m{M}_k{K}_n{N}_g{group_size}"] = out
    return results
