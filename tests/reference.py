"""Figures from ../shared/REFERENCE.md, obtained from Hugging Face transformers' model classes
(parameters), torch.utils.flop_counter.FlopCounterMode (FLOPs) and the returned cache tensors
(KV bytes). Tests compare specsheet's arithmetic against them; nothing here feeds the product."""

from __future__ import annotations

# name: (token emb, position emb, attention, MLP, norms, output head, total)
PARAMS = {
    "gpt2-small": (38_597_376, 786_432, 28_348_416, 56_669_184, 38_400, 0, 124_439_808),
    "gpt2-medium": (51_463_168, 1_048_576, 100_761_600, 201_449_472, 100_352, 0, 354_823_168),
    "gpt2-large": (64_328_960, 1_310_720, 236_113_920, 472_089_600, 186_880, 0, 774_030_080),
    "gpt2-xl": (80_411_200, 1_638_400, 491_827_200, 983_424_000, 310_400, 0, 1_557_611_200),
    "llama3-8b": (525_336_576, 0, 1_342_177_280, 5_637_144_576, 266_240, 525_336_576,
                  8_030_261_248),
    "llama3-70b": (1_050_673_152, 0, 12_079_595_520, 56_371_445_760, 1_318_912, 1_050_673_152,
                   70_553_706_496),
}

# name: {T: forward FLOPs per token}, KV bytes per token (bf16), KV bytes at T = 1024
FLOPS = {
    "gpt2-small": {1: 247_100_928, 8: 247_358_976, 1024: 284_812_800},
    "gpt2-medium": {1: 707_004_416, 8: 707_692_544, 1024: 807_569_408},
    "gpt2-large": {1: 1_544_419_840, 8: 1_545_710_080, 1024: 1_732_979_200},
    "gpt2-xl": {1: 3_110_249_600, 8: 3_112_400_000, 1024: 3_424_515_200},
    "llama3-8b": {1: 15_009_841_152, 8: 15_013_511_168, 1024: 15_546_187_776},
    "llama3-70b": {1: 139_006_050_304, 8: 139_024_400_384, 1024: 141_687_783_424},
}
KV_PER_TOKEN = {
    "gpt2-small": 36_864, "gpt2-medium": 98_304, "gpt2-large": 184_320, "gpt2-xl": 307_200,
    "llama3-8b": 131_072, "llama3-70b": 327_680,
}
KV_AT_1024 = {
    "gpt2-small": 37_748_736, "gpt2-medium": 100_663_296, "gpt2-large": 188_743_680,
    "gpt2-xl": 314_572_800, "llama3-8b": 134_217_728, "llama3-70b": 335_544_320,
}

# GPT-2 small, one block (seed 000): attention, MLP, two LayerNorms, the block
GPT2_SMALL_BLOCK = (2_362_368, 4_722_432, 3_072, 7_087_872)
GPT2_SMALL_BF16_BYTES = 248_879_616
LLAMA3_8B_KV_AT_8192 = 1_073_741_824
