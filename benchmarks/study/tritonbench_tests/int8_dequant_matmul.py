import torch


def test_int8_matmul_rowwise_dequantize():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # bias case: a [M, K] int8, b = w.t() (non-contiguous view of w [N, K]), row-wise absmax states
    m, k, n = 300, 512, 512
    a = torch.randint(-127, 128, (m, k), dtype=torch.int8, device=device)
    w = torch.randint(-127, 128, (n, k), dtype=torch.int8, device=device)
    state_x = torch.rand(m, device=device, dtype=torch.float32) * 3.0 + 0.5
    state_w = torch.rand(n, device=device, dtype=torch.float32) * 0.2 + 0.05
    bias = torch.randn(n, device=device, dtype=torch.float16)
    results[f"bias_m{m}_k{k}_n{n}"] = int8_matmul_rowwise_dequantize(a, w.t(), state_x, state_w, bias)
    # no-bias case with K and N not multiples of the block sizes
    m, k, n = 128, 333, 1000
    a = torch.randint(-127, 128, (m, k), dtype=torch.int8, device=device)
    b = torch.randint(-127, 128, (k, n), dtype=torch.int8, device=device)
    state_x = torch.rand(m, device=device, dtype=torch.float32) * 3.0 + 0.5
    state_w = torch.rand(n, device=device, dtype=torch.float32) * 0.2 + 0.05
    results[f"nobias_m{m}_k{k}_n{n}"] = int8_matmul_rowwise_dequantize(a, b, state_x, state_w, None)
    return results
