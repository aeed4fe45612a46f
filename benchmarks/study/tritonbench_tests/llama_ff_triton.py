import torch


def test_kernel_ff():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # K (= dim) must be a multiple of BLOCK_SIZE_K (64): the kernel does not mask K.
    for batch, seq, dim, hidden in ((1, 100, 256, 300), (1, 127, 512, 344)):
        x = torch.randn(batch, seq, dim, device=device, dtype=torch.float16)
        w1 = torch.randn(hidden, dim, device=device, dtype=torch.float16) / dim ** 0.5
        w3 = torch.randn(hidden, dim, device=device, dtype=torch.float16) / dim ** 0.5
        rms_w = 1.0 + 0.1 * torch.randn(dim, device=device, dtype=torch.float16)
        results[f"fp16_b{batch}_s{seq}_d{dim}_h{hidden}"] = kernel_ff(x, w1, w3, rms_w)
    # int8 weights hold float8 e5m2 bit patterns (USE_FP8 path)
    batch, seq, dim, hidden = 2, 40, 256, 200
    x = torch.randn(batch, seq, dim, device=device, dtype=torch.float16)
    w1 = (torch.randn(hidden, dim, device=device) / dim ** 0.5).to(torch.float8_e5m2).view(torch.int8)
    w3 = (torch.randn(hidden, dim, device=device) / dim ** 0.5).to(torch.float8_e5m2).view(torch.int8)
    rms_w = (1.0 + 0.1 * torch.randn(dim, device=device)).to(torch.float8_e5m2).view(torch.int8)
    results[f"fp8w_b{batch}_s{seq}_d{dim}_h{hidden}"] = kernel_ff(x, w1, w3, rms_w)
    return results
