import torch


def test_diag_ssm_forward_backward():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # (length, batch, dim)
    for length, batch, dim in ((64, 3, 100), (128, 4, 256)):
        tag = f"L{length}_b{batch}_d{dim}"
        # real
        s = torch.randn(batch, dim, device=device, requires_grad=True)
        x = torch.randn(length, batch, dim, device=device, requires_grad=True)
        lam = (torch.rand(dim, device=device) * 0.98).requires_grad_(True)
        y = diag_ssm_forward_triton(s, x, lam)
        y.backward(torch.randn_like(y))
        results[f"real_{tag}_y"] = y.detach()
        results[f"real_{tag}_grad_s"] = s.grad
        results[f"real_{tag}_grad_x"] = x.grad
        results[f"real_{tag}_grad_lambda"] = lam.grad
        # complex
        s = torch.randn(batch, dim, device=device, dtype=torch.complex64, requires_grad=True)
        x = torch.randn(length, batch, dim, device=device, dtype=torch.complex64, requires_grad=True)
        mag = torch.rand(dim, device=device) * 0.98
        phase = torch.rand(dim, device=device) * 6.2831853
        lam = torch.polar(mag, phase).requires_grad_(True)
        y = diag_ssm_forward_triton(s, x, lam)
        y.backward(torch.randn_like(y))
        results[f"complex_{tag}_y"] = torch.view_as_real(y.detach())
        results[f"complex_{tag}_grad_s"] = torch.view_as_real(s.grad)
        results[f"complex_{tag}_grad_x"] = torch.view_as_real(x.grad)
        results[f"complex_{tag}_grad_lambda"] = torch.view_as_real(lam.grad)
    return results
