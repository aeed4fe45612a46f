import torch


def _kl_labels(n_rows, n_cols, device):
    labels = torch.randint(0, n_cols, (n_rows,), device=device, dtype=torch.long)
    ignored = torch.rand(n_rows, device=device) < 0.1
    return torch.where(ignored, torch.full_like(labels, -100), labels)


def test_cross_entropy_fwd_bwd():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # The forward kernel writes loss/lse/z_loss at [col_block * n_rows + row], i.e. only the first
    # n_blocks * n_rows entries of each returned buffer; only that written prefix is compared.
    # (n_rows, n_cols, dtype, smoothing, logit_scale, lse_square_scale, BLOCK_SIZE, SPLIT)
    cases = (
        (256, 1000, torch.float32, 0.0, 1.0, 1e-4, 1024, False),
        (128, 4000, torch.float16, 0.1, 0.5, 0.0, 4096, False),
        (64, 3000, torch.float32, 0.1, 1.0, 0.0, 1024, True),
    )
    for n_rows, n_cols, dtype, smoothing, scale, zscale, block, split in cases:
        logits = (2.0 * torch.randn(n_rows, n_cols, device=device)).to(dtype)
        labels = _kl_labels(n_rows, n_cols, device)
        n_blocks = (n_cols + block - 1) // block
        loss, lse, z_loss = cross_entropy_fwd(
            logits, labels, smoothing=smoothing, logit_scale=scale, lse_square_scale=zscale,
            ignored_index=-100, total_classes=n_cols, class_start_idx=0, BLOCK_SIZE=block,
            HAS_SMOOTHING=smoothing > 0.0, SPLIT=split,
        )
        key = f"{str(dtype).split('.')[-1]}_{n_rows}x{n_cols}_b{block}" + ("_split" if split else "")
        written = n_blocks * n_rows
        results[key + "_loss"] = loss.reshape(-1)[:written].clone()
        results[key + "_lse"] = lse.reshape(-1)[:written].clone()
        if not split:
            if zscale != 0.0:
                results[key + "_zloss"] = z_loss.reshape(-1)[:written].clone()
            dloss = torch.randn(n_rows, device=device, dtype=torch.float32)
            dlogits = cross_entropy_bwd(
                dloss, logits, lse, labels, smoothing=smoothing, logit_scale=scale,
                lse_square_scale=zscale, ignored_index=-100, total_classes=n_cols, class_start_idx=0,
                BLOCK_SIZE=block, HAS_SMOOTHING=smoothing > 0.0,
            )
            results[key + "_dlogits"] = dlogits
    return results
