import torch


def _kl_sparse_index(batch, heads, n_ctx, block_m, nnz_s, nnz_v, device):
    # per (batch, head, query block): nnz_s key blocks (block 0 first, so every query row has a visible key,
    # then distinct block starts in ascending order; blocks above the diagonal are masked causally) and up to
    # nnz_v extra key columns left of the query block that are not inside the chosen blocks
    num_rows = (n_ctx + block_m - 1) // block_m
    block_count = torch.full((batch, heads, num_rows), nnz_s, dtype=torch.int32)
    block_offset = torch.zeros(batch, heads, num_rows, nnz_s, dtype=torch.int32)
    column_count = torch.zeros(batch, heads, num_rows, dtype=torch.int32)
    column_index = torch.zeros(batch, heads, num_rows, nnz_v, dtype=torch.int32)
    for b in range(batch):
        for h in range(heads):
            for m in range(num_rows):
                others = (torch.randperm(num_rows - 1)[: nnz_s - 1] + 1).sort().values
                blocks = torch.cat([torch.zeros(1, dtype=torch.long), others])
                block_offset[b, h, m] = (blocks * block_m).to(torch.int32)
                covered = torch.zeros(n_ctx, dtype=torch.bool)
                for s in blocks.tolist():
                    covered[s * block_m:(s + 1) * block_m] = True
                free = (~covered[: m * block_m]).nonzero().flatten()
                n_cols = min(int(torch.randint(0, nnz_v + 1, (1,))), free.numel())
                cols = free[torch.randperm(free.numel())[:n_cols]].sort().values
                column_count[b, h, m] = n_cols
                column_index[b, h, m, :n_cols] = cols.to(torch.int32)
    return (block_count.to(device), block_offset.to(device), column_count.to(device), column_index.to(device))


def test_mixed_sparse_attention():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    # N_CTX a multiple of the 64-row query block (query rows are loaded unmasked); the valid lengths
    # (seqlens) are ragged. The kernel visits 8 key blocks and one tile of 64 extra columns per query block.
    for B, H, N, D, seqlens, dtype in ((2, 2, 640, 64, [640, 555], torch.float16),
                                       (1, 3, 576, 128, [500], torch.bfloat16),
                                       (1, 2, 512, 32, [512], torch.float16)):
        q = torch.randn(B, H, N, D, device=device, dtype=dtype)
        k = torch.randn(B, H, N, D, device=device, dtype=dtype)
        v = torch.randn(B, H, N, D, device=device, dtype=dtype)
        block_count, block_offset, column_count, column_index = _kl_sparse_index(B, H, N, 64, 8, 64, device)
        seqlens_t = torch.tensor(seqlens, device=device, dtype=torch.int32)
        o = _triton_mixed_sparse_attention(q, k, v, seqlens_t, block_count, block_offset, column_count,
                                           column_index, D ** -0.5)
        results[f"{str(dtype)[6:]}_b{B}h{H}n{N}d{D}_len{'-'.join(map(str, seqlens))}"] = o
    return results
