import torch


def test_linear_layer():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    dtype = torch.float16
    # 3-D input with bias and gelu
    x = torch.randn(2, 100, 512, device=device, dtype=dtype)
    w = torch.randn(384, 512, device=device, dtype=dtype) * 0.05
    bias = torch.randn(384, device=device, dtype=dtype)
    results["fp16_2x100x512_n384_bias_gelu"] = linear_layer(x, w, bias, "gelu")
    # 2-D input, K not a multiple of the K block, relu, saved activation inputs
    x = torch.randn(300, 200, device=device, dtype=dtype)
    w = torch.randn(256, 200, device=device, dtype=dtype) * 0.07
    bias = torch.randn(256, device=device, dtype=dtype)
    act_inputs = torch.empty(300, 256, device=device, dtype=dtype)
    results["fp16_300x200_n256_bias_relu"] = linear_layer(x, w, bias, "relu", act_inputs)
    results["fp16_300x200_n256_bias_relu_act_inputs"] = act_inputs
    # no bias: tanh, and no activation ("")
    x = torch.randn(257, 256, device=device, dtype=dtype)
    w = torch.randn(320, 256, device=device, dtype=dtype) * 0.06
    results["fp16_257x256_n320_tanh"] = linear_layer(x, w, None, "tanh")
    results["fp16_257x256_n320_noact"] = linear_layer(x, w, None, "")
    return results
