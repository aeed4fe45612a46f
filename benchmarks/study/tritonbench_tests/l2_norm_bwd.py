import torch


def test_l2_norm_bwd():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    cases = (
        ((512, 1024), torch.float32),
        ((3, 100, 333), torch.float32),
        ((256, 2048), torch.float16),
    )
    for shape, dtype in cases:
        x = torch.randn(shape, device=device, dtype=dtype)
        dy = torch.randn(shape, device=device, dtype=dtype)
        key = f"{str(dtype).split('.')[-1]}_" + "x".join(str(s) for s in shape)
        results[key] = _l2_norm_bwd(x, dy, eps=1e-5)
    return results
