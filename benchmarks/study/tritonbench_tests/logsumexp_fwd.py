import torch


def test_logsumexp_fwd():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    x = torch.randn(1024, 1000, device=device, dtype=torch.float32)
    results["fp32_1024x1000"] = logsumexp_fwd(x)
    x = torch.randn(4, 64, 4097, device=device, dtype=torch.float16)
    results["fp16_4x64x4097_scale"] = logsumexp_fwd(x, scale=0.5)
    x = torch.randn(3, 70001, device=device, dtype=torch.float32) * 4.0
    results["fp32_3x70001_multiblock_scale_bf16"] = logsumexp_fwd(x, scale=1.7, dtype=torch.bfloat16)
    return results
