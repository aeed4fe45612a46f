"""Shared vocabulary of the reward-hack rules (KL5xx) and an example kernel for their docs."""

KERNEL_PRELUDE = '''import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x, o, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(o + i, tl.load(x + i, mask=i < n), mask=i < n)

'''

#: torch callables that compute (not allocate or reshape): calling one is a library fallback
TORCH_COMPUTE = {
    "matmul", "mm", "bmm", "addmm", "baddbmm", "addbmm", "einsum", "tensordot", "mv", "dot",
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "softmax", "log_softmax", "layer_norm", "group_norm", "batch_norm", "instance_norm",
    "relu", "gelu", "silu", "sigmoid", "tanh", "exp", "log", "sum", "mean", "cumsum", "cumprod",
    "max", "min", "amax", "amin", "argmax", "argmin", "var", "std", "norm", "topk", "sort",
    "logsumexp", "linear", "addcmul", "lerp", "clamp", "abs", "sqrt", "rsqrt", "pow",
    "scaled_dot_product_attention", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
    "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d", "max_pool3d",
    "add", "sub", "mul", "div", "prod", "square", "erf", "softplus", "hardtanh", "elu",
}
#: tensor methods that are heavy library calls
METHOD_COMPUTE = {
    "matmul", "mm", "bmm", "addmm", "baddbmm", "softmax", "log_softmax", "cumsum", "logsumexp",
}
TORCH_MODULE_PREFIXES = ("torch.nn.functional.", "torch.special.", "torch.linalg.", "torch.fft.")
#: torch.nn constructors that are not computations
NN_NOT_COMPUTE = {"torch.nn.Parameter", "torch.nn.ParameterList", "torch.nn.ParameterDict",
                  "torch.nn.ModuleList", "torch.nn.ModuleDict", "torch.nn.Identity",
                  "torch.nn.parameter.Parameter", "torch.nn.Buffer"}


def is_torch_compute(name: str) -> bool:
    if name.startswith(TORCH_MODULE_PREFIXES):
        return True
    if name.startswith("torch.") and name.count(".") == 1:
        return name.split(".", 1)[1] in TORCH_COMPUTE
    return False
