import torch


def test_embedding():
    # vocabulary-parallel embedding: this shard holds rows [vob_start_id, vob_end_id) of the full table;
    # tokens outside the shard give zero vectors
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    cases = ((1000, 0, 1000, 257, 768, torch.float16, torch.int64),
             (3000, 1000, 2000, 300, 1000, torch.float32, torch.int32),
             (512, 128, 384, 64, 128, torch.bfloat16, torch.int64))
    for vocab, start, end, n_ctx, hidden, dtype, id_dtype in cases:
        weight = torch.randn(end - start, hidden, device=device, dtype=dtype)
        input_ids = torch.randint(0, vocab, (n_ctx,), device=device, dtype=id_dtype)
        out = torch.empty(n_ctx, hidden, device=device, dtype=dtype)
        embedding(input_ids, weight, start, end, out)
        results[f"{str(dtype).split('.')[-1]}_v{vocab}_{start}-{end}_n{n_ctx}_d{hidden}"] = out
    return results
