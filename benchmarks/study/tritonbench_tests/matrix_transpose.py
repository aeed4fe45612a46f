import torch


def test_matrix_transpose():
    results = {}
    # The wrapper draws its own random fp16 matrix (on "cuda"); SIZE_M and D_HEAD are tl.arange
    # extents and must be powers of two.
    for size_m, d_head in ((16, 16), (64, 128), (256, 64), (128, 256)):
        results[f"m{size_m}_d{d_head}"] = wrapper(size_m, d_head)
    return results
