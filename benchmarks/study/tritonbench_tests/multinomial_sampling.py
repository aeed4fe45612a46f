import torch


def test_multinomial_sampling():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for batch, num_tokens, with_indices in ((13, 1000, True), (40, 4097, True), (16, 32000, False)):
        logits = torch.randn(batch, num_tokens, device=device) * 3
        scores = torch.softmax(logits, dim=-1)
        seeds = torch.randint(0, 2**31 - 1, (batch,), device=device, dtype=torch.int64)
        offsets = torch.randint(0, 1 << 20, (batch,), device=device, dtype=torch.int64)
        results[f"b{batch}_v{num_tokens}"] = multinomial_sampling(scores, seeds, offsets)
        if with_indices:
            # sorted (top-k style) scores with the matching token indices
            sorted_scores, sorted_idx = torch.sort(scores, dim=-1, descending=True)
            results[f"b{batch}_v{num_tokens}_idx"] = multinomial_sampling(sorted_scores, seeds, offsets, sorted_idx)
    return results
