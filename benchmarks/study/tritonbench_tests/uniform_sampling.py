import torch


def test_uniform_():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # The samples come from the default CUDA generator's Philox seed/offset (seeded by the harness);
    # each call advances the offset, so later calls also check that the generator state moves on.
    cases = (
        ((1 << 20,), torch.float32, 0.0, 1.0),
        ((1000, 1003), torch.float32, -2.5, 3.0),
        ((3, 333, 77), torch.float16, -1.0, 1.0),
        ((4099,), torch.bfloat16, 10.0, 20.0),
        ((300,), torch.float32, 0.0, 1.0),
    )
    for shape, dtype, lo, hi in cases:
        x = torch.empty(shape, device=device, dtype=dtype)
        y = uniform_(x, lo, hi)
        results[f"{str(dtype).split('.')[-1]}_{'x'.join(map(str, shape))}_{lo}_{hi}"] = y
    return results
