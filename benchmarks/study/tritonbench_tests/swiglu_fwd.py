import torch


def test_swiglu_fwd():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # xy holds [x | y] along the last dimension; the output has half its width
    for shape, dtype in (((512, 2 * 1536), torch.float32), ((3, 100, 2 * 700), torch.float16),
                         ((256, 2 * 1000), torch.bfloat16)):
        xy = torch.randn(shape, device=device, dtype=dtype)
        results[f"{str(dtype)[6:]}_{'x'.join(map(str, shape))}"] = _swiglu_fwd(xy)
    # writing into a caller-provided output buffer
    xy = torch.randn(4, 96, 2 * 384, device=device, dtype=torch.float32)
    out = torch.empty(4, 96, 384, device=device, dtype=torch.float32)
    _swiglu_fwd(xy, out=out)
    results["float32_4x96x768_out"] = out
    return results
