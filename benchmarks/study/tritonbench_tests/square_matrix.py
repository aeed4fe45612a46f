import torch


def test_square():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for name, (rows, cols, dtype) in {
        "fp32_1823x781": (1823, 781, torch.float32),
        "fp32_512x4096": (512, 4096, torch.float32),
        "fp16_1000x1500": (1000, 1500, torch.float16),
    }.items():
        x = torch.randn(rows, cols, device=device, dtype=dtype)
        results[name] = square(x)
    return results
