"""The keywords a Triton launch accepts besides the kernel's parameters.

``kernel[grid](..., **kwargs)`` hands every keyword that is not a parameter to the backend's
options; since Triton 3.0 a keyword that is neither raises ``KeyError: Keyword argument X was
specified but unrecognised`` at the first launch (Triton 2's launcher, a function of fixed keywords,
raised ``TypeError``). The options are the fields of each backend's options dataclass: listed here for
the backends upstream Triton ships (NVIDIA ``CUDAOptions``, AMD ``HIPOptions``, releases 2.1 to 3.9,
and the options of ``triton.Config`` in newer development trees) and for the Intel XPU and Ascend NPU
backends, so that a keyword one of them accepts is never reported. A backend kernlint does not know
may accept others (a ``# noqa: KL111`` on the launch).
"""

from __future__ import annotations

#: JITFunction.run's own keywords, and Triton 2's launcher keywords (``stream``, ``device``: still
#: accepted by name there, rejected by an assertion since 3.0: not this check's concern)
RUN_KEYWORDS = frozenset({"grid", "warmup", "stream", "device", "device_type"})

_NVIDIA = """num_warps num_ctas num_stages maxnreg cluster_dims ptx_version ptx_options enable_fp_fusion
launch_cooperative_grid launch_pdl supported_fp8_dtypes deprecated_fp8_dtypes deprecated_fp8_dot_operand_dtypes
default_dot_input_precision allowed_dot_input_precisions max_num_imprecise_acc_default extern_libs debug
backend_name sanitize_overflow arch instrumentation_mode fpsan_homomorphic_casts enable_reflect_ftz ir_override
min_shared_mem sched4reg warp_size clc enable_warp_specialization enable_persistent optimize_epilogue
num_buffers_warp_spec num_consumer_groups reg_dec_producer reg_inc_consumer allow_fp8e4nv allow_fp8e4b15
enable_fp8_fast_accumulation ctas_per_cga preferred_ctas_per_cga minRegAutoWS maxRegAutoWS pingpongAutoWS
early_tma_store_lowering generate_subtiled_region"""
_AMD = """waves_per_eu matrix_instr_nonkdim kpack schedule_hint allow_flush_denorm llvm_fn_attrs wgp_cu_mode
instruction_sched_variant"""
_INTEL = """threads_per_warp reduce_variable_liveness grf_mode loop_distribute optimize_load_masks code_sinking
sub_32_dpas dynamic_shared_memory use_barrier generate_native_code core_clock_rate is_lts num_threads"""
_ASCEND = """llvm_version kernel_name enable_nd2nz_on_vector multibuffer mix_mode enable_auto_bind_sub_block
enable_hivm_auto_cv_balance sync_solver unit_flag inject_barrier_all limit_auto_multi_buffer_only_for_local_buffer
limit_auto_multi_buffer_of_local_buffer set_workspace_multibuffer tile_mix_vector_loop tile_mix_cube_loop
auto_blockify_size"""

LAUNCH_OPTIONS = RUN_KEYWORDS | frozenset(" ".join((_NVIDIA, _AMD, _INTEL, _ASCEND)).split())
