import torch


def test_context_attention_fwd():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for seq_lens, H, D in (([100, 257, 31], 4, 64), ([300, 128], 8, 128)):
        b_seq_len = torch.tensor(seq_lens, device=device, dtype=torch.int32)
        b_start_loc = torch.zeros_like(b_seq_len)
        b_start_loc[1:] = torch.cumsum(b_seq_len, 0)[:-1]
        total = sum(seq_lens)
        q = torch.randn(total, H, D, device=device, dtype=torch.float16)
        k = torch.randn(total, H, D, device=device, dtype=torch.float16)
        v = torch.randn(total, H, D, device=device, dtype=torch.float16)
        o = torch.empty_like(q)
        context_attention_fwd(q, k, v, o, b_start_loc, b_seq_len, max(seq_lens))
        results[f"fp16_lens{'-'.join(map(str, seq_lens))}_h{H}_d{D}"] = o
    return results
