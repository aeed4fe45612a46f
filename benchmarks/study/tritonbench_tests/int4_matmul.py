import torch


def _kl_int4_weights(k, n, group_size, device):
    # Packed layout expected by matmul_dequantize_int4_s2 (as produced by quantize_int4):
    # qweight [K // 8, N] int32 (8 nibbles along K), scales [K // group_size, N],
    # qzeros [K // group_size, N // 8] int32 (8 nibbles along N).
    qweight = torch.randint(-2 ** 31, 2 ** 31 - 1, (k // 8, n), dtype=torch.int32, device=device)
    qzeros = torch.randint(-2 ** 31, 2 ** 31 - 1, (k // group_size, n // 8), dtype=torch.int32, device=device)
    scales = (torch.rand(k // group_size, n, device=device) * 0.02 + 0.002).to(torch.float16)
    return qweight, scales, qzeros


def test_matmul_dequantize_int4_s2():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    group_size = 128
    # K stays a multiple of BLOCK_SIZE_K * SPLIT_K for every autotune config (the kernel does not mask K)
    for m, k, n in ((37, 1024, 256), (300, 2048, 264)):
        x = torch.randn(m, k, device=device, dtype=torch.float16)
        qweight, scales, qzeros = _kl_int4_weights(k, n, group_size, device)
        results[f"fp16_m{m}_k{k}_n{n}"] = matmul_dequantize_int4_s2(x, qweight, scales, qzeros, group_size)
    return results
