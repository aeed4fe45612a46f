import torch


def _kl_fp16_bits_in_fp32(h):
    # fp16 sign/exponent/mantissa bits moved into a float32 word (exponent bias still 15): the value
    # is h * 2**-112, which the kernel's compensator 2**(127 - 15) restores
    bits = h.view(torch.int16).to(torch.int32)
    return (((bits & 0x8000) << 16) | ((bits & 0x7FFF) << 13)).view(torch.float32)


def test_mul_exponent_compensator():
    # dst = src * 2**(127 - 15) in float32; the launch covers src.shape[0] // BLOCK_SIZE blocks of the
    # flat tensor without masking, so the inputs are 1-D with a length divisible by BLOCK_SIZE
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for n, block in ((1000, None), (3 * 4096, 256), (777 * 128, 128)):
        if block == 256:
            src = _kl_fp16_bits_in_fp32(torch.randn(n, device=device, dtype=torch.float16))
        else:
            src = torch.randn(n, device=device, dtype=torch.float32) * 2.0 ** -100
        dst = launch_mul_kernel(src) if block is None else launch_mul_kernel(src, BLOCK_SIZE=block)
        results[f"fp32_n{n}_block{block or 1}"] = dst
    return results
