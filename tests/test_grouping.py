"""Kernel name → group rules: built-ins, base names, user rules from TOML."""

from __future__ import annotations

import pytest

import roofscope
from roofscope.errors import RoofscopeError
from roofscope.grouping import BUILTIN_RULES, Grouper, Rule, base_name, default_rules, save_rule
from tests.conftest import SAMPLES

G = Grouper(BUILTIN_RULES)
ELEMENTWISE = "void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<>>()"


@pytest.mark.parametrize(
    ("kernel", "group"),
    [
        ("volta_sgemm_32x128_nt", "GEMM"),
        ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "GEMM"),
        (
            "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>(T1::Params)",
            "GEMM",
        ),
        (
            "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize64x64x32_execute_kernel__5x_cublas",
            "GEMM",
        ),
        (
            "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x64x32",
            "conv fprop",
        ),
        ("sm90_xmma_dgrad_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc", "conv dgrad"),
        ("sm90_xmma_wgrad_indexed_implicit_gemm_f32f32_tf32f32_f32", "conv wgrad"),
        ("void at::<unnamed>::conv_depthwise2d_forward_kernel<3, float, int>(int)", "conv fprop"),
        (
            "void cudnn::bn_fw_tr_1C11_singleread<float, 512>(cudnn::bn_fw_tr_1C11_args<T1>)",
            "batch norm",
        ),
        (
            ELEMENTWISE,
            "element-wise",
        ),
        (
            "void engines_precompiled::nchwToNhwcKernel<float, float, float, 0, 1, 0>()",
            "layout transform",
        ),
        ("void <unnamed>::softmax_warp_forward<float, float, float, 10, 1, 0>(T2 *)", "softmax"),
        ("void at::<unnamed>::max_pool_forward_nchw<float, int>(T2)", "pooling"),
        (
            "void at::<unnamed>::multi_tensor_apply_kernel<at::<unnamed>::TensorListMetadata<2>>()",
            "optimizer",
        ),
        ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm *)", "NCCL"),
        ("flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 32, 4>>", "attention"),
        # cuDNN SDPA says "fprop": attention, not a convolution (issue 18)
        (
            "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1"
            "_cga1x1x1_kernel0_0",
            "attention",
        ),
        # Inductor kernels by their op words (tests/data/kernel_groups.csv has many more)
        ("triton_poi_fused__to_copy_6", "element-wise"),
        ("triton_per_fused_add_native_dropout_native_layer_norm_transpose_view_8", "layer norm"),
        ("triton_red_fused_sum_view_0", "reduction"),
        ("triton_tem_fused_mm_0", "GEMM"),
        (
            "void at::native::reduce_kernel<(int)128, (int)4, at::native::ReduceOp<float>>(T3)",
            "reduction",
        ),
    ],
)
def test_builtin_rules(kernel, group):
    assert G.group(kernel) == group


def test_unmatched_names_fall_back_to_base_name():
    assert base_name("void rs::scale_kernel<4, float>(T2 *, int, T2)") == "rs::scale_kernel"
    assert base_name("fma_f32(float *, int)") == "fma_f32"
    assert (
        base_name("std::enable_if<!T7, void>::type internal::gemvx::kernel<int>(int)")
        == "internal::gemvx::kernel"
    )
    assert G.match("fma_f32(float *, int)") == ("fma_f32", "base name")


@pytest.mark.usefixtures("shared_sample_cache")  # the bundled sample, ingested once
def test_project_rules_come_first(tmp_path, in_tmp_cwd):
    (in_tmp_cwd / "roofscope.toml").write_text(
        '[[groups]]\npattern = "splitKreduce"\nname = "split-K epilogue"\n'
    )
    rules = default_rules()
    assert rules[0] == Rule("splitKreduce", "split-K epilogue", str(in_tmp_cwd / "roofscope.toml"))
    session = roofscope.load(SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv")
    names = {g["name"] for g in session.reports[0].rows("group")}
    assert "split-K epilogue" in names


def test_user_config_rules(tmp_path, in_tmp_cwd, monkeypatch):
    config = tmp_path / "cfg"
    (config / "roofscope").mkdir(parents=True)
    (config / "roofscope" / "config.toml").write_text(
        "[[groups]]\npattern = 'bn_'\nname = 'BN (mine)'\n"
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    assert Grouper(default_rules()).group("cudnn::bn_fw_tr") == "BN (mine)"


def test_bad_rules_are_user_errors(in_tmp_cwd):
    (in_tmp_cwd / "roofscope.toml").write_text('[[groups]]\npattern = "("\nname = "x"\n')
    with pytest.raises(RoofscopeError, match="invalid regular expression"):
        default_rules()
    (in_tmp_cwd / "roofscope.toml").write_text("[[groups]]\nname = 'x'\n")
    with pytest.raises(RoofscopeError, match="needs 'pattern'"):
        default_rules()


def test_save_rule_round_trip(in_tmp_cwd):
    path = in_tmp_cwd / "roofscope.toml"
    save_rule(path, Rule(r"my_(gemm|conv)\d+", "mine"))
    save_rule(path, Rule("it's", "quoted"))
    rules = default_rules()
    assert rules[0].pattern == r"my_(gemm|conv)\d+" and rules[1].pattern == "it's"


@pytest.mark.usefixtures("shared_sample_cache")  # the bundled sample, ingested once
def test_regrouping_a_session_live(in_tmp_cwd):
    session = roofscope.load(SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv")
    before = {g["name"]: g["time_s"] for g in session.reports[0].rows("group")}
    session.set_rules([Rule(".", "everything")])
    (only,) = session.reports[0].rows("group")
    assert only["name"] == "everything"
    assert only["time_s"] == pytest.approx(sum(before.values()))
