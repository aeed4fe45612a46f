import torch


def test_conv2d_forward():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # (batch, in ch, H, W, out ch, kernel h/w, stride h/w, padding h/w, groups, input dtype, fp16, tf32)
    # The output is always fp32; fp16=True rounds input and weights to fp16 before the products.
    cases = (
        (2, 3, 17, 17, 20, (3, 3), (1, 1), (1, 1), 1, torch.float32, False, False),
        (2, 8, 15, 20, 12, (3, 5), (2, 1), (1, 2), 2, torch.float32, True, False),
        (1, 48, 9, 9, 40, (1, 1), (1, 1), (0, 0), 1, torch.float16, False, False),
        (3, 6, 11, 13, 9, (2, 3), (1, 2), (0, 1), 3, torch.float32, False, True),
        (8, 32, 28, 28, 64, (3, 3), (1, 1), (1, 1), 1, torch.float16, False, False),
    )
    for b, cin, h, w, cout, (kh, kw), (sh, sw), (ph, pw), groups, dtype, fp16, tf32 in cases:
        x = torch.randn(b, cin, h, w, device=device, dtype=dtype)
        weight = (torch.randn(cout, cin // groups, kh, kw, device=device) / (cin // groups * kh * kw) ** 0.5).to(dtype)
        key = (f"{str(dtype).split('.')[-1]}_b{b}_c{cin}to{cout}_{h}x{w}_k{kh}x{kw}_s{sh}x{sw}_p{ph}x{pw}_g{groups}"
               + ("_fp16" if fp16 else "") + ("_tf32" if tf32 else ""))
        results[key] = conv2d_forward(x, weight, kh, kw, sh, sw, ph, pw, groups, fp16=fp16, tf32=tf32)
    return results
