import torch


def _kl_per_block_int8(x, blk, pre_scale):
    # SageAttention-style per-block symmetric int8 quantisation of a [B, H, L, D] tensor:
    # one fp32 scale per (batch, head, block of `blk` rows), laid out [B, H, cdiv(L, blk)].
    B, H, L, D = x.shape
    nb = (L + blk - 1) // blk
    xf = x.float() * pre_scale
    pad = nb * blk - L
    xp = torch.nn.functional.pad(xf, (0, 0, 0, pad)).view(B, H, nb, blk, D)
    scale = xp.abs().amax(dim=(-1, -2)) / 127.0
    q = torch.round(xp / scale[..., None, None]).clamp(-127, 127).to(torch.int8)
    q = q.view(B, H, nb * blk, D)[:, :, :L].contiguous()
    return q, scale.contiguous()


def test_attention_fwd():
    # The reference kernel hard-codes a head dimension of 96 (a 128-wide tile masked to 96 columns)
    # and BLOCK_M = 128, BLOCK_N = 64 with per-block scales (q: per 128 rows, k: per 64 rows).
    # q, k are int8 (quantised per block, q pre-multiplied by sm_scale * log2(e)), v is fp16.
    # The sequence length stays a multiple of BLOCK_N = 64 (key blocks are not masked to -inf),
    # and 192 exercises the masked tail of a 128-row query block.
    device = "cuda" if torch.cuda.is_available() else "cpu"
    D = 96
    results = {}
    for B, H, N in ((2, 4, 256), (1, 3, 192)):
        q = torch.randn(B, H, N, D, device=device, dtype=torch.float16)
        k = torch.randn(B, H, N, D, device=device, dtype=torch.float16)
        v = torch.randn(B, H, N, D, device=device, dtype=torch.float16)
        q8, q_scale = _kl_per_block_int8(q, 128, D ** -0.5 * 1.44269504)
        k8, k_scale = _kl_per_block_int8(k, 64, 1.0)
        o = forward(q8, k8, v, q_scale, k_scale)
        results[f"int8_b{B}h{H}n{N}d{D}"] = o
    return results
