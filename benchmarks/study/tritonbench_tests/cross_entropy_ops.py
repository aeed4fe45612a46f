import torch


def _kl_labels(n_rows, n_cols, device):
    labels = torch.randint(0, n_cols, (n_rows,), device=device, dtype=torch.long)
    ignored = torch.rand(n_rows, device=device) < 0.1
    return torch.where(ignored, torch.full_like(labels, -100), labels)


def test_cross_entropy_loss():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # (n_rows, n_cols, dtype, label_smoothing, logit_scale, lse_square_scale); n_cols > 64K takes the split path
    cases = (
        (256, 1000, torch.float32, 0.0, 1.0, 1e-4),
        (128, 5000, torch.float16, 0.1, 0.5, 0.0),
        (8, 70000, torch.float32, 0.0, 1.0, 1e-4),
    )
    for n_rows, n_cols, dtype, smoothing, scale, zscale in cases:
        logits = (2.0 * torch.randn(n_rows, n_cols, device=device)).to(dtype).requires_grad_(True)
        labels = _kl_labels(n_rows, n_cols, device)
        losses, z_losses = cross_entropy_loss(
            logits, labels, label_smoothing=smoothing, logit_scale=scale,
            lse_square_scale=zscale, ignored_index=-100,
        )
        grad = torch.randn(n_rows, device=device, dtype=losses.dtype)
        losses.backward(grad)
        key = f"{str(dtype).split('.')[-1]}_{n_rows}x{n_cols}"
        results[key + "_loss"] = losses.detach()
        if zscale != 0.0:
            results[key + "_zloss"] = z_losses.detach()
        results[key + "_dlogits"] = logits.grad
    return results
