import torch


def test_layer_norm_fwd_bwd():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}

    # LayerNorm with bias and a residual input (fp16), forward then backward with a residual gradient
    for m, n in ((1024, 1000), (256, 4096)):
        x = torch.randn(m, n, device=device, dtype=torch.float16)
        res = torch.randn(m, n, device=device, dtype=torch.float16)
        w = (1.0 + 0.1 * torch.randn(n, device=device)).to(torch.float16)
        b = (0.1 * torch.randn(n, device=device)).to(torch.float16)
        y, mean, rstd, res_out = _layer_norm_fwd(x, w, b, 1e-5, residual=res)
        dy = torch.randn(m, n, device=device, dtype=torch.float16)
        dres = torch.randn(m, n, device=device, dtype=torch.float16)
        dx, dw, db, _ = _layer_norm_bwd(dy, res_out, w, b, 1e-5, mean, rstd, dresidual=dres, has_residual=True)
        key = f"ln_fp16_{m}x{n}"
        results[key + "_y"] = y
        results[key + "_mean"] = mean
        results[key + "_rstd"] = rstd
        results[key + "_residual_out"] = res_out
        results[key + "_dx"] = dx
        results[key + "_dw"] = dw
        results[key + "_db"] = db

    # RMSNorm without bias (fp32); backward recomputes the output
    m, n = 333, 2048
    x = torch.randn(m, n, device=device, dtype=torch.float32)
    w = 1.0 + 0.1 * torch.randn(n, device=device)
    y, _, rstd, _ = _layer_norm_fwd(x, w, None, 1e-6, is_rms_norm=True)
    dy = torch.randn(m, n, device=device, dtype=torch.float32)
    dx, dw, _, _, y_re = _layer_norm_bwd(dy, x, w, None, 1e-6, None, rstd, is_rms_norm=True, recompute_output=True)
    key = f"rms_fp32_{m}x{n}"
    results[key + "_y"] = y
    results[key + "_rstd"] = rstd
    results[key + "_dx"] = dx
    results[key + "_dw"] = dw
    results[key + "_y_recomputed"] = y_re
    return results
