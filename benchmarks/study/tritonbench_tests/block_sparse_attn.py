import torch


def _kl_csr_layout(num_layout, num_blocks, local_blocks, vert_stride, device):
    # Causal block-sparse layouts (local window + vertical stride, shifted per layout) in CSR form:
    # row indices [L, num_blocks + 1], column indices [L, num_blocks * num_blocks] (zero padded).
    rows = torch.zeros(num_layout, num_blocks + 1, dtype=torch.int32)
    cols = torch.zeros(num_layout, num_blocks * num_blocks, dtype=torch.int32)
    for h in range(num_layout):
        nnz = 0
        for i in range(num_blocks):
            for j in range(i + 1):
                if i - j < local_blocks or (j + h) % vert_stride == 0:
                    cols[h, nnz] = j
                    nnz += 1
            rows[h, i + 1] = nnz
    return rows.to(device), cols.to(device)


def test_block_sparse_attention():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    cases = [
        # B, H, H_kv, seq, BLOCK_M/N, BLOCK_D, NUM_D_BLOCKS, num_layout
        (2, 4, 4, 512, 64, 64, 1, 1),
        (1, 8, 2, 300, 64, 64, 2, 2),
    ]
    for B, H, H_kv, seq, BLOCK, BLOCK_D, NUM_D_BLOCKS, L in cases:
        D = BLOCK_D * NUM_D_BLOCKS
        q = torch.randn(B, H, seq, D, device=device, dtype=torch.float16)
        k = torch.randn(B, H_kv, seq, D, device=device, dtype=torch.float16)
        v = torch.randn(B, H_kv, seq, D, device=device, dtype=torch.float16)
        nb = (seq + BLOCK - 1) // BLOCK
        rows, cols = _kl_csr_layout(L, nb, 2, 3, device)
        out = block_sparse_attention(
            q, k, v, rows, cols, rows.stride(0), cols.stride(0), L, D ** -0.5, H, H_kv, seq,
            BLOCK, seq % BLOCK == 0, BLOCK, seq % BLOCK == 0, BLOCK_D, NUM_D_BLOCKS)
        results[f"fp16_B{B}_H{H}_Hkv{H_kv}_S{seq}_D{D}_L{L}"] = out
    return results
