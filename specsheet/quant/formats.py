"""Element types, block formats and the quantization formats specsheet knows, as exact integers.

An element type stores ``block_size`` values in ``block_bytes`` bytes; ``payload_bits`` of each
value are the value itself and the rest of the block (scales, minimums) is overhead:
overhead per block = block_bytes x 8 - block_size x payload_bits bits.

GGML's block types follow llama.cpp, ``gguf-py/gguf/constants.py`` (GGML_QUANT_SIZES, the same
sizes as the structs of ``ggml/src/ggml-common.h``), github.com/ggml-org/llama.cpp. Tensors of
the other toolchains are named by their safetensors dtype (F32, F16, BF16, I64, I32, I8, U8,
F8_E4M3), the type a file's header records: a GPTQ ``qweight`` is I32 even though it holds
int4 values.
"""

from __future__ import annotations

from typing import Literal

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, did_you_mean, quoted


class ElementType(NamedTuple):
    """How a tensor's values are stored: ``block_size`` values in ``block_bytes`` bytes."""

    name: str  # GGML type name (Q4_K) or safetensors dtype (I32)
    block_size: int  # values per block (1 for plain types)
    block_bytes: int  # bytes per block
    payload_bits: int  # bits of one value without the block's scales (16 for F16)

    def nbytes(self, values: int) -> int:
        """Bytes of ``values`` values: values / block_size x block_bytes (whole blocks only)."""
        if values % self.block_size:
            raise SpecError(f"{self.name}: {values:,} values are not whole blocks of "
                            f"{self.block_size}")
        return values // self.block_size * self.block_bytes

    def overhead(self, values: int) -> int:
        """Bytes of the blocks' scales and minimums: blocks x (block_bytes - block_size x
        payload_bits / 8)."""
        blocks = values // self.block_size
        return blocks * (self.block_bytes * 8 - self.block_size * self.payload_bits) // 8


_QK_K = 256  # values in one k-quant super-block (ggml-common.h QK_K)

# (block values, block bytes, payload bits), as GGML_QUANT_SIZES writes them.
GGML_TYPES: dict[str, ElementType] = {
    t.name: t
    for t in (
        ElementType("F32", 1, 4, 32),
        ElementType("F16", 1, 2, 16),
        ElementType("BF16", 1, 2, 16),
        ElementType("Q4_0", 32, 2 + 16, 4),  # fp16 d, 32 x 4 bits
        ElementType("Q4_1", 32, 2 + 2 + 16, 4),  # fp16 d and m
        ElementType("Q5_0", 32, 2 + 4 + 16, 5),  # fp16 d, 32 high bits, 32 x 4 low bits
        ElementType("Q5_1", 32, 2 + 2 + 4 + 16, 5),
        ElementType("Q8_0", 32, 2 + 32, 8),  # fp16 d, 32 x int8
        ElementType("Q2_K", _QK_K, 2 + 2 + _QK_K // 16 + _QK_K // 4, 2),
        ElementType("Q3_K", _QK_K, 2 + _QK_K // 4 + _QK_K // 8 + 12, 3),
        ElementType("Q4_K", _QK_K, 2 + 2 + _QK_K // 2 + 12, 4),
        ElementType("Q5_K", _QK_K, 2 + 2 + _QK_K // 2 + _QK_K // 8 + 12, 5),
        ElementType("Q6_K", _QK_K, 2 + _QK_K // 2 + _QK_K // 4 + _QK_K // 16, 6),
        ElementType("IQ4_NL", 32, 2 + 16, 4),
        ElementType("IQ4_XS", _QK_K, 2 + 2 + _QK_K // 2 + _QK_K // 64, 4),
        ElementType("MXFP4", 32, 1 + 16, 4),  # one E8M0 scale, 32 x FP4 (E2M1)
        ElementType("NVFP4", 64, 4 + 32, 4),  # four FP8 (E4M3) scales, one per 16 values
    )
}

# safetensors dtypes: one value per block.
TENSOR_TYPES: dict[str, ElementType] = {
    t.name: t
    for t in (
        ElementType("F32", 1, 4, 32),
        ElementType("F16", 1, 2, 16),
        ElementType("BF16", 1, 2, 16),
        ElementType("I64", 1, 8, 64),
        ElementType("I32", 1, 4, 32),
        ElementType("I8", 1, 1, 8),
        ElementType("U8", 1, 1, 8),
        ElementType("F8_E4M3", 1, 1, 8),
    )
}

# specsheet's dtype names (model/memory.py) for the tensors a format leaves unquantized
UNQUANTIZED_DTYPES: dict[str, str] = {"fp32": "F32", "fp16": "F16", "bf16": "BF16"}

# ---- block facts of the non-GGUF formats -----------------------------------------------------

NF4_BLOCK = 64  # bitsandbytes quantize_4bit's default blocksize (bitsandbytes/functional.py)
NF4_CODE_VALUES = 16  # the NF4 code book (quant_map), float32
NF4_NESTED_BLOCK = 256  # double quantization: quantize_blockwise(absmax, blocksize=256)
DYNAMIC_MAP_VALUES = 256  # create_dynamic_map(): the nested code book, float32
MXFP4_BLOCK = 32  # OCP Microscaling: 32 FP4 values share one E8M0 scale byte
NVFP4_BLOCK = 16  # 16 FP4 values share one FP8 E4M3 scale
FP8_BLOCK = 128  # DeepSeek-V3 / llm-compressor FP8_BLOCK: 128 x 128 weight tiles

Family = Literal["gguf", "gptq", "awq", "bnb", "fp8", "compressed-tensors", "mxfp4", "nvfp4"]


class QuantFormat(NamedTuple):
    """One storage format: the toolchain that writes it and what its quantized weights hold."""

    name: str  # as the user types it: gguf-q4_k_m
    family: Family
    bits: int  # nominal bits of one quantized weight value
    group_size: int | None  # default group of the group formats; None: the block is fixed
    unquantized: str  # element type of the tensors left unquantized (F16, BF16, F32 for GGUF)
    source: str  # the code the layout follows: repository and path
    summary: str  # one line: what a quantized Linear stores


_LLAMA_CPP = "ggml-org/llama.cpp src/llama-quant.cpp (llama_tensor_get_type)"
_GPTQ = "AutoGPTQ/AutoGPTQ auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py (QuantLinear)"
_AWQ = "casper-hansen/AutoAWQ awq/modules/linear/gemm.py (WQLinear_GEMM)"
_BNB = ("bitsandbytes-foundation/bitsandbytes bitsandbytes/nn/modules.py (Linear4bit, "
        "Linear8bitLt) and bitsandbytes/functional.py (QuantState.as_dict)")
_CT = ("neuralmagic/compressed-tensors src/compressed_tensors/compressors/quantized_compressors/"
       "{}")


def _gguf(ftype: str, bits: int, summary: str) -> QuantFormat:
    return QuantFormat(f"gguf-{ftype}", "gguf", bits, None, "F32", _LLAMA_CPP, summary)


FORMATS: dict[str, QuantFormat] = {
    f.name: f
    for f in (
        QuantFormat("gptq-int4", "gptq", 4, 128, "F16", _GPTQ,
                    "qweight I32 [K/8, N], qzeros I32 [K/g, N/8], scales F16 [K/g, N], "
                    "g_idx I32 [K]"),
        QuantFormat("gptq-int8", "gptq", 8, 128, "F16", _GPTQ,
                    "qweight I32 [K/4, N], qzeros I32 [K/g, N/4], scales F16 [K/g, N], "
                    "g_idx I32 [K]"),
        QuantFormat("awq-int4", "awq", 4, 128, "F16", _AWQ,
                    "qweight I32 [K, N/8], qzeros I32 [K/g, N/8], scales F16 [K/g, N]"),
        QuantFormat("bnb-nf4", "bnb", 4, None, "BF16", _BNB,
                    "weight U8 [N·K/2, 1], absmax F32 per 64 values, quant_map F32 [16], "
                    "quant_state (JSON bytes)"),
        QuantFormat("bnb-nf4-dq", "bnb", 4, None, "BF16", _BNB,
                    "weight U8 [N·K/2, 1], absmax U8 per 64 values, nested_absmax F32 per "
                    "256 blocks, quant_map F32 [16], nested_quant_map F32 [256], quant_state"),
        QuantFormat("bnb-int8", "bnb", 8, None, "BF16", _BNB,
                    "weight I8 [N, K], SCB F32 [N], weight_format U8 []"),
        QuantFormat("fp8", "fp8", 8, None, "BF16", _CT.format("naive_quantized.py"),
                    "weight F8_E4M3 [N, K], weight_scale F32 [1], input_scale F32 [1]"),
        QuantFormat("fp8-channel", "fp8", 8, None, "BF16", _CT.format("naive_quantized.py"),
                    "weight F8_E4M3 [N, K], weight_scale F32 [N, 1]"),
        QuantFormat("fp8-block", "fp8", 8, None, "BF16", _CT.format("naive_quantized.py"),
                    "weight F8_E4M3 [N, K], weight_scale F32 [N/128, K/128] (rounded up)"),
        QuantFormat("w4a16", "compressed-tensors", 4, 128, "BF16",
                    _CT.format("pack_quantized.py"),
                    "weight_packed I32 [N, K/8], weight_scale BF16 [N, K/g], "
                    "weight_shape I64 [2]"),
        QuantFormat("w8a8", "compressed-tensors", 8, None, "BF16",
                    _CT.format("naive_quantized.py"),
                    "weight I8 [N, K], weight_scale BF16 [N, 1]"),
        QuantFormat("mxfp4", "mxfp4", 4, None, "BF16",
                    _CT.format("fp4_quantized.py (MXFP4PackedCompressor)"),
                    "weight_packed U8 [N, K/2], weight_scale U8 (E8M0) [N, K/32]"),
        QuantFormat("nvfp4", "nvfp4", 4, None, "BF16",
                    _CT.format("fp4_quantized.py (NVFP4PackedCompressor)"),
                    "weight_packed U8 [N, K/2], weight_scale F8_E4M3 [N, K/16], "
                    "weight_global_scale F32 [1], input_global_scale F32 [1]"),
        _gguf("f16", 16, "2-D weights F16"),
        _gguf("q8_0", 8, "Q8_0: 34 bytes per 32 values"),
        _gguf("q6_k", 6, "Q6_K: 210 bytes per 256 values"),
        _gguf("q5_k_m", 5, "Q5_K (176/256), Q6_K for some attn_v and ffn_down"),
        _gguf("q4_k_m", 4, "Q4_K (144/256), Q6_K for some attn_v and ffn_down"),
        _gguf("q4_0", 4, "Q4_0: 18 bytes per 32 values"),
        _gguf("q3_k_m", 3, "Q3_K (110/256), Q4_K/Q5_K for attn_v, attn_output, ffn_down"),
        _gguf("q2_k", 2, "Q2_K (84/256), Q3_K/Q4_K for attn_v, attn_output, ffn_down"),
        _gguf("iq4_xs", 4, "IQ4_XS: 136 bytes per 256 values"),
    )
}


# general.file_type (llama.cpp's llama_ftype, include/llama.h) -> specsheet's GGUF format
GGUF_FILE_TYPES = {1: "gguf-f16", 2: "gguf-q4_0", 7: "gguf-q8_0", 10: "gguf-q2_k",
                   12: "gguf-q3_k_m", 15: "gguf-q4_k_m", 17: "gguf-q5_k_m", 18: "gguf-q6_k",
                   30: "gguf-iq4_xs"}


def check_format(name: str) -> QuantFormat:
    """The format called ``name``, or SpecError naming the known ones."""
    if name not in FORMATS:
        raise SpecError(f"unknown format {quoted(name)}{did_you_mean(name, FORMATS)}; "
                        f"expected one of {', '.join(FORMATS)}", field="quant", value=name)
    return FORMATS[name]
