import torch


def test_softmax_online():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # fp32 only: the kernel computes in the output dtype and tl.exp accepts fp32/fp64 only.
    # Widths are powers of two up to 4096 or larger than the 4096 tile (ragged last tile):
    # a width below 4096 that is not a power of two makes the reference return NaN.
    for rows, cols in ((256, 1024), (100, 128), (64, 5000), (16, 12288), (9, 4096 + 77)):
        x = torch.randn(rows, cols, device=device, dtype=torch.float32) * 3.0
        results[f"fp32_{rows}x{cols}"] = softmax(x)
    return results
