import torch


def test_masked_add():
    # In place: grad += alpha * p_data where p_mask is 0 (False); grad is returned.
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for shape, alpha in (((1 << 20,), 0.5), ((1000, 999), -1.25), ((3, 77, 129), 2.0)):
        grad = torch.randn(shape, device=device, dtype=torch.float32)
        p_data = torch.randn(shape, device=device, dtype=torch.float32)
        p_mask = torch.rand(shape, device=device) < 0.3
        masked_add(grad, p_data, p_mask, alpha)
        results[f"fp32_{'x'.join(map(str, shape))}_alpha{alpha}"] = grad
    return results
