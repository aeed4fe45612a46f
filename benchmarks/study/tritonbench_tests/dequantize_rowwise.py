import torch


def test_dequantize_rowwise():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for rows, cols in ((1000, 777), (2048, 1024)):
        x = torch.randint(-127, 128, (rows, cols), dtype=torch.int8, device=device)
        state_x = torch.rand(rows, device=device, dtype=torch.float32) * 4.0 + 0.1
        results[f"int8_{rows}x{cols}"] = dequantize_rowwise(x, state_x)
    return results
