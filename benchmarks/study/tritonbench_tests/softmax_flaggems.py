import torch


def test_softmax():
    # forward and backward of softmax(x, dim, dtype) for the inner (last dim) and non-inner kernels;
    # dim=1 of [8, 200, 2000] takes the multi-tile non-inner path, N > 32768 the multi-tile inner path
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    cases = (((37, 1000), -1, torch.float32, None),
             ((4, 300, 65), 1, torch.float16, None),
             ((8, 200, 2000), 1, torch.float32, None),
             ((64, 777), -1, torch.float16, torch.float32),
             ((6, 129, 10), 1, torch.bfloat16, None),
             ((3, 40000), 1, torch.bfloat16, None))
    for shape, dim, dtype, out_dtype in cases:
        x = (torch.randn(shape, device=device, dtype=torch.float32) * 3).to(dtype).requires_grad_(True)
        out = softmax(x, dim=dim, dtype=out_dtype)
        out.backward(torch.randn_like(out))
        tag = f"{str(dtype).split('.')[-1]}_{'x'.join(map(str, shape))}_dim{dim}"
        results[f"{tag}_out"] = out.detach()
        results[f"{tag}_dx"] = x.grad
    return results
