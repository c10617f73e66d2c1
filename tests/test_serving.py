"""specsheet serve: the exact parts checked against figures derived by hand, from the models'
dimensions and the way vLLM shards them (docs/serving.md), never by calling the code under test.

Shared facts of the derivations:
- bf16: 2 bytes a value. vLLM pads the vocabulary to a multiple of 64 and gives each of the tp
  GPUs pad64(V) / tp rows of the embedding and of the output head.
- A KV block holds 16 tokens; one layer's block on one GPU is 16 x (KV heads on the GPU) x
  (head_dim + v_head_dim) x 2 bytes. num_blocks = pool // block // layers-per-group;
  vLLM's "Maximum concurrency" = num_blocks / blocks per request.
- H100 SXM: 84,932,978,278 bytes as CUDA reports it (79.10 GiB in a vLLM log; the catalog's
  cuda_memory_bytes); U = 0.9, so the budget is floor(0.9 x that)
  = 769,687,289,856 // 10 = 76,968,728,985.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from specsheet.cli.app import app
from specsheet.model.spec import ModelSpec

runner = CliRunner()
DATA = Path(__file__).parent / "data"
H100 = 84_932_978_278  # CUDA's total: the catalog's cuda_memory_bytes, not the datasheet's
H200 = 150_754_820_096
BUDGET_H100 = H100 * 9 // 10
GIB = 2**30
OVERHEAD = GIB  # the overhead estimate, 1 GiB a GPU


def serve(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["serve", *args, "--json"])
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def concurrency(doc: dict[str, Any]) -> tuple[int, int, int, float]:
    blocks = doc["kv_blocks"]
    return (blocks["num_blocks"], blocks["blocks_per_request"], doc["max_concurrency"],
            blocks["vllm_max_concurrency"])


# ---- Llama 3 70B: L 80, d 8192, 64 heads of 128, 8 KV heads, d_ff 28672 (gated), V 128256

def llama3_70b_layer(tp: int) -> int:
    """Parameters of one layer on one GPU."""
    heads, kv = 64 // tp, max(1, 8 // tp)
    attention = 8192 * heads * 128 * 2 + 8192 * kv * 128 * 2  # q and o; k and v
    mlp = 3 * 8192 * (28672 // tp)  # gate, up (column) and down (row)
    return attention + mlp + 2 * 8192  # two RMSNorms, whole on every GPU


def test_llama3_70b_on_8_h100_one_kv_head_per_gpu() -> None:
    doc = serve("llama3-70b", "--gpu", "h100-sxm", "--gpus", "8")
    assert doc["parallel"] == {"gpus": 8, "tp": 8, "pp": 1, "ep": 1, "dp": 1,
                                "dcp": 1}
    vocab_rows = 128256 // 8  # 128,256 is already 2,004 x 64
    params = 80 * llama3_70b_layer(8) + 2 * vocab_rows * 8192 + 8192  # + embedding, head, norm
    assert llama3_70b_layer(8) == 106_971_136
    weights = 2 * params
    assert weights == 17_640_734_720
    memory = doc["memory_per_gpu"]
    assert memory["weights_bytes"] == weights
    # one KV head of 128 (K and V) per GPU per layer, 2 bytes: 512 bytes a token a layer
    assert memory["kv_bytes_per_token"] == 80 * 512 == 40_960
    page = 16 * 512
    assert doc["kv_blocks"]["page_bytes"] == page == 8192
    assert memory["kv_bytes_per_request"] == (8192 // 16) * page * 80 == 335_544_320
    # the estimates in the pool: activation = 8,192 batched tokens x (2 x 8192 + the widest
    # intermediate, gate and up: 2 x 3584) x 2 bytes, plus 1,024 x 16,032 fp32 logits
    activation = 8192 * (2 * 8192 + 2 * 3584) * 2 + 1024 * vocab_rows * 4
    assert memory["activation_bytes"] == activation == 451_543_040
    # vLLM's rotary cos/sin cache on every GPU: 8,192 positions x 128 x 2 bytes
    rotary = 8192 * 128 * 2
    assert memory["buffers_bytes"] == rotary == 2_097_152
    pool = BUDGET_H100 - weights - rotary - activation - OVERHEAD
    assert memory["kv_pool_bytes"] == pool == 57_271_563_714
    blocks = pool // page // 80
    assert concurrency(doc) == (blocks, 512, blocks // 512, blocks / 512)
    assert (blocks, blocks // 512) == (87_389, 170)
    assert doc["fits"] is True
    assert doc["max_context"] == 8192  # the model's context: more would fit


def test_llama3_70b_on_16_gpus_replicates_the_kv_heads() -> None:
    doc = serve("llama3-70b", "--gpu", "h100-sxm", "--gpus", "16", "--kv-memory", "40GiB")
    # tp 16 > 8 KV heads: each GPU holds one KV head (each head on two GPUs), 4 query heads
    assert llama3_70b_layer(16) == 8192 * 4 * 128 * 2 + 8192 * 1 * 128 * 2 + 3 * 8192 * 1792 \
        + 2 * 8192 == 54_542_336
    params = 80 * llama3_70b_layer(16) + 2 * (128256 // 16) * 8192 + 8192
    assert doc["memory_per_gpu"]["weights_bytes"] == 2 * params == 8_989_458_432
    # the same KV per GPU as at tp 8: replication saves nothing
    assert doc["memory_per_gpu"]["kv_bytes_per_token"] == 40_960
    # vLLM's arithmetic with kv_cache_memory_bytes = 40 GiB: 40 x 2^30 // 8192 // 80 blocks
    blocks = 40 * GIB // 8192 // 80
    assert blocks == 65_536
    assert concurrency(doc) == (65_536, 512, 128, 128.0)


def test_mixtral_8x7b_at_tp_2_splits_every_expert() -> None:
    doc = serve("mixtral-8x7b", "--gpu", "h100-sxm", "--tp", "2", "--kv-memory", "20GB")
    # per layer on one GPU: q, o 16 heads of 128; k, v 4 of 8 KV heads; the router (8 x 4096)
    # whole; 8 experts, each with gate, up, down of 14336 / 2 = 7168 columns
    layer = (4096 * 2048 * 2 + 4096 * 512 * 2 + 8 * 4096 + 8 * 3 * 4096 * 7168 + 2 * 4096)
    assert layer == 725_655_552
    params = 32 * layer + 2 * (32000 // 2) * 4096 + 4096
    assert doc["memory_per_gpu"]["weights_bytes"] == 2 * params == 46_704_107_520
    # 4 KV heads of 128 a GPU: 4 x 256 x 2 = 2,048 bytes a token a layer
    assert doc["memory_per_gpu"]["kv_bytes_per_token"] == 32 * 2048
    page = 16 * 2048
    blocks = 20 * 10**9 // page // 32
    per_request = 32768 // 16
    assert concurrency(doc) == (blocks, per_request, blocks // per_request,
                                blocks / per_request)
    assert (blocks, blocks // per_request) == (19_073, 9)


def deepseek_v3_fp8_block_per_gpu(tp: int) -> int:
    """DeepSeek-V3 in fp8 with 128 x 128 blocks: each Linear's shard in 1-byte values plus an
    fp32 scale per block; embeddings, head, norms and routers in bf16. d 7168, 128 heads
    (q/k 192 = 128 + 64 rotary, v 128), q_lora 1536, kv_lora 512, 256 experts of 2048, one
    shared expert of 2048, 3 dense layers of 18432, V 129280."""
    def linear(n: int, k: int) -> int:
        return n * k + -(-n // 128) * -(-k // 128) * 4

    d = 7168
    attention = (linear(1536, d)  # q_a: replicated
                 + linear(128 * 192 // tp, 1536)  # q_b: column
                 + linear(512 + 64, d)  # kv_a with the rotary key: replicated
                 + linear(128 * (128 + 128) // tp, 512)  # kv_b: column
                 + linear(d, 128 * 128 // tp))  # o: row
    norms = (2 * d + 1536 + 512) * 2
    dense = 3 * linear(18432 // tp, d)  # gate, up, down (the down's shape is transposed)
    expert = 3 * linear(2048 // tp, d)
    moe = 256 * d * 2 + 256 * expert + expert  # router (bf16), routed experts, shared expert
    vocab = 129280 // tp * d * 2  # 129,280 = 2,020 x 64
    return 61 * (attention + norms) + 3 * dense + 58 * moe + 2 * vocab + d * 2


def test_deepseek_v3_fp8_block_at_tp_8_keeps_the_latent_whole() -> None:
    weights = deepseek_v3_fp8_block_per_gpu(8)
    assert weights == 85_140_071_456
    on_h100 = serve("deepseek-v3", "--gpu", "h100-sxm", "--gpus", "8", "--quant", "fp8-block")
    assert on_h100["memory_per_gpu"]["weights_bytes"] == weights
    assert weights > BUDGET_H100  # more than 0.9 x 80 GB: it does not fit, and serve says so
    assert on_h100["fits"] is False
    assert on_h100["max_concurrency"] == 0
    assert on_h100["estimates"] is None
    doc = serve("deepseek-v3", "--gpu", "h200", "--gpus", "8", "--quant", "fp8-block",
                "--kv-memory", "40GiB")
    assert doc["memory_per_gpu"]["weights_bytes"] == weights
    # MLA caches 512 + 64 values a token a layer, not split by tp: every GPU holds them all
    assert doc["memory_per_gpu"]["kv_bytes_per_token"] == 61 * 576 * 2 == 70_272
    # an H200 is Hopper: vLLM's FlashMLA forces blocks of 64 tokens (docs/serving.md)
    assert doc["kv_blocks"]["block_size"] == 64
    page = 64 * 576 * 2
    blocks = 40 * GIB // page // 61
    per_request = 163840 // 64
    assert concurrency(doc) == (blocks, per_request, blocks // per_request,
                                blocks / per_request)
    assert (blocks, blocks // per_request) == (9_549, 3)
    # on an A100 (no FlashMLA: Triton MLA) the block stays 16
    a100 = serve("deepseek-v3", "--gpu", "a100-80gb-sxm", "--gpus", "8", "--quant",
                 "fp8-block", "--kv-memory", "40GiB")
    assert a100["kv_blocks"]["block_size"] == 16
    assert a100["kv_blocks"]["num_blocks"] == 40 * GIB // (16 * 576 * 2) // 61 == 38_199
    # --block-size overrides
    given = serve("deepseek-v3", "--gpu", "h200", "--gpus", "8", "--kv-memory", "40GiB",
                  "--block-size", "128")
    assert given["kv_blocks"]["block_size"] == 128
    assert doc["fits"] is True


def test_gpt_oss_120b_mxfp4_on_one_h100_with_sliding_layers() -> None:
    # the checkpoint's bytes (count's figure), then the experts as vLLM's kernel pads them
    doc = serve("gpt-oss-120b", "--gpu", "h100-sxm", "--quant", "mxfp4")
    d, experts = 2880, 128
    # attention in bf16: q 64 x 64, k and v 8 x 64, o, their biases, 64 sink logits
    attention = (2 * d * 4096 + 2 * d * 512 + 4096 + 2 * 512 + d + 64) * 2
    router = (experts * d + experts) * 2
    # mxfp4 experts: 4 bits a value (n x k / 2 bytes) and a one-byte scale per 32 values
    matrix = d * d // 2 + d * d // 32
    expert_bytes = experts * 3 * matrix + experts * 3 * d * 2  # + bf16 biases
    layer = attention + 2 * d * 2 + router + expert_bytes
    checkpoint = 36 * layer + 2 * 201088 * d * 2 + d * 2  # 201,088 = 3,142 x 64
    assert checkpoint == 65_248_815_744
    # on an H100 vLLM 0.14.1 runs the Triton MoE kernel, whose Hopper swizzle pads the stored
    # experts (docs/serving.md): w13 [1472 x 5888] + scales [5888 x 90], w2 [1472 x 3072] +
    # scales [3072 x 90], fp32 biases
    padded = 1472 * 5888 + 5888 * 90 + 1472 * 3072 + 3072 * 90 + (2 * 2880 + 2880) * 4
    weights = checkpoint - 36 * expert_bytes + 36 * experts * padded
    assert doc["memory_per_gpu"]["weights_bytes"] == weights == 68_905_724_544
    # 8 KV heads of 64: 8 x 128 x 2 = 2,048 bytes a token a layer; 18 windowed layers (128)
    # and 18 full ones form two groups of 18 layers sharing one pool
    assert doc["kv_blocks"]["groups"] == [{"window": 128, "layers": 18, "state": False},
                                          {"window": 0, "layers": 18, "state": False}]
    page = 16 * 2048
    full = 131072 // 16
    windowed = -(-min(128 - 1 + 8192, 131072) // 16) + 1  # SlidingWindowSpec: 521 blocks
    assert doc["kv_blocks"]["blocks_per_request"] == full + windowed == 8713
    activation = 8192 * (2 * d + 4 * 2 * d) * 2 + 1024 * 201088 * 4
    rotary = 131072 * 64 * 2  # the cos/sin cache: max_position_embeddings x head_dim, bf16
    pool = BUDGET_H100 - weights - rotary - activation - OVERHEAD
    assert doc["memory_per_gpu"]["kv_pool_bytes"] == pool
    blocks = pool // page // 18
    assert concurrency(doc) == (blocks, 8713, 1, blocks / 8713)
    assert doc["memory_per_gpu"]["kv_bytes_per_request"] == 8713 * page * 18


def test_mistral_7b_at_32k_caps_the_windowed_kv_as_vllm_does() -> None:
    # every layer has a window of 4,096; vLLM reserves min(W - 1 + max_num_batched_tokens,
    # max_model_len) tokens, in blocks, plus one block for a window that starts mid-block
    doc = serve("mistral-7b", "--gpu", "h100-sxm", "--kv-memory", "40GiB")
    page = 16 * 8 * 256 * 2
    blocks = 40 * GIB // page // 32
    per_request = -(-min(4095 + 8192, 32768) // 16) + 1
    assert (blocks, per_request) == (20_480, 769)
    assert concurrency(doc) == (20_480, 769, 26, 20_480 / 769)
    assert doc["memory_per_gpu"]["weights_bytes"] == 7_241_732_096 * 2
    # fewer batched tokens, a smaller reservation: 6,143 tokens, 385 blocks
    small = serve("mistral-7b", "--gpu", "h100-sxm", "--kv-memory", "40GiB",
                  "--max-num-batched-tokens", "2048")
    assert concurrency(small)[1:3] == (385, 20_480 // 385)


def test_pipeline_stages_take_layers_as_vllm_assigns_them() -> None:
    # 80 layers over 3 stages: 26 each, the remaining 2 to the stages before the last: 26, 27,
    # 27 (get_pp_indices); the binding stage is the one with the fewest blocks
    doc = serve("llama3-70b", "--gpu", "h100-sxm", "--tp", "8", "--pp", "3",
                "--kv-memory", "20GiB")
    assert [s["layers"] for s in doc["stages"]] == [27, 27, 26]
    assert doc["parallel"]["gpus"] == 24
    per_request = 512
    for stage in doc["stages"]:
        blocks = 20 * GIB // 8192 // stage["layers"]
        assert stage["num_blocks"] == blocks
        assert stage["max_concurrency"] == blocks // per_request
    assert doc["max_concurrency"] == 20 * GIB // 8192 // 27 // 512


def test_expert_parallelism_holds_whole_experts() -> None:
    tp2 = serve("mixtral-8x7b", "--gpu", "h100-sxm", "--tp", "2", "--kv-memory", "1GB")
    ep2 = serve("mixtral-8x7b", "--gpu", "h100-sxm", "--tp", "2", "--ep", "--kv-memory", "1GB")
    assert ep2["parallel"]["ep"] == 2
    # 4 whole experts or 8 half experts: the same bytes
    assert ep2["memory_per_gpu"]["weights_bytes"] == tp2["memory_per_gpu"]["weights_bytes"]


def test_serve_table_groups_memory_fit_and_estimates() -> None:
    result = runner.invoke(app, ["serve", "llama3-70b", "--gpu", "h100-sxm", "--gpus", "8",
                                 "--price", "2.50", "--tokens-per-word", "1.3"])
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    memory, fit, estimates = (out.index("memory per GPU"), out.index("Fit at max-model-len"),
                              out.index("Estimates (roofline"))
    assert memory < fit < estimates
    for text in ("17,640,734,720", "Activation peak (estimate)", "Runtime overhead (estimate)",
                 "57,271,563,714", "Rotary cache", "87,389", "170 (vLLM logs 170.68x)",
                 "Cost per million output words", "an estimate at mfu 0.5"):
        assert text in out, text


def test_estimates_follow_the_roofline_formulas() -> None:
    doc = serve("llama3-8b", "--gpu", "h100-sxm", "--concurrency", "1", "--prompt", "1000",
                "--output", "2", "--mfu", "1", "--mbu", "1", "--price", "3.6")
    est = doc["estimates"]
    # prefill: 1,000 tokens x forward FLOPs per token at T = 1,000 / bf16 peak; llama3-8b's
    # forward FLOPs per token at T: 15,009,841,152 at T = 1 (REFERENCE.md) + 4 x (T - 1) x
    # 32 layers x 4096
    flops = 15_009_841_152 + 4 * 999 * 32 * 4096
    assert est["prefill_s"] == pytest.approx(1000 * flops / 989.4e12)
    # decode at one request: all weights (16,060,522,496 bytes) and the KV of 1,001 tokens
    # (131,072 bytes each) over 3.35 TB/s
    step = (8_030_261_248 * 2 + 1001 * 131_072) / 3.35e12
    assert est["decode_step_s"] == pytest.approx(step)
    assert est["tokens_per_s_total"] == pytest.approx(1 / step)
    # $3.60 an hour is $0.001 a second
    assert est["usd_per_million_output_tokens"] == pytest.approx(0.001 * step * 1e6)


def test_moe_decode_reads_the_experts_its_tokens_reach() -> None:
    one = serve("mixtral-8x7b", "--gpu", "h100-sxm", "--tp", "2", "--concurrency", "1")
    many = serve("mixtral-8x7b", "--gpu", "h100-sxm", "--tp", "2", "--concurrency", "64")
    assert one["estimates"]["experts_touched"] == pytest.approx(2 / 8)  # k / E
    assert many["estimates"]["experts_touched"] == pytest.approx(1 - (6 / 8) ** 64)


def test_check_with_a_gpu_exits_1_when_a_limit_fails() -> None:
    ok = runner.invoke(app, ["check", "llama3-70b", "--gpu", "h100-sxm", "--gpus", "8",
                             "--min-concurrency", "170", "--json"])
    assert ok.exit_code == 0, ok.stderr
    doc = json.loads(ok.stdout)
    assert doc["ok"] is True
    assert doc["serve"]["checks"][1] == {"figure": "max_concurrency",
                                         "option": "--min-concurrency", "value": 170,
                                         "limit": 170, "ok": True}
    over = runner.invoke(app, ["check", "llama3-70b", "--gpu", "h100-sxm", "--gpus", "8",
                               "--min-concurrency", "171"])
    assert over.exit_code == 1
    assert "OVER" in over.stdout
    slow = runner.invoke(app, ["check", "llama3-8b", "--gpu", "h100-sxm",
                               "--min-tokens-per-s", "100000"], env={"COLUMNS": "100"})
    assert slow.exit_code == 1
    # the limit as a number is said, not in exponent form (1e+05)
    (row,) = [line for line in slow.stdout.splitlines() if "Tokens/s per request" in line]
    assert row.split()[-2:] == ["100,000", "OVER"], row


def test_compare_with_a_gpu_adds_the_serve_rows() -> None:
    result = runner.invoke(app, ["compare", "llama3-8b", "mistral-7b", "--gpu", "h100-sxm",
                                 "--json"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert [s["model"]["name"] for s in doc["serve"]] == ["llama3-8b", "mistral-7b"]
    # both at 8,192 tokens, the shortest context: mistral's 4,096-token window holds
    # cdiv(min(4095 + 8192 batched, 8192), 16) + 1 = 513 blocks (vLLM's SlidingWindowSpec)
    assert {s["request"]["max_model_len"] for s in doc["serve"]} == {8192}
    assert doc["serve"][1]["kv_blocks"]["blocks_per_request"] == 513
    alone = json.loads(runner.invoke(app, ["compare", "mistral-7b", "--gpu", "h100-sxm",
                                           "--json"]).stdout)
    # at its own 32,768: cdiv(4095 + 8192, 16) + 1 = 769
    assert alone["serve"][0]["kv_blocks"]["blocks_per_request"] == 769
    table = runner.invoke(app, ["compare", "llama3-8b", "mistral-7b", "--gpu", "h100-sxm"])
    assert "Served on 1 x h100-sxm" in table.stdout


def test_a_users_hardware_file_with_round_numbers(tmp_path: Path) -> None:
    gpu = tmp_path / "round.yaml"
    gpu.write_text("name: round\nmemory_bytes: 100000000000\nbandwidth_bytes_per_s: 1TB\n"
                   "peak_flops_per_s: {bf16: 1.0e15}\n")
    doc = serve("llama3-8b", "--gpu", str(gpu), "--memory-utilization", "0.5")
    assert doc["memory_per_gpu"]["budget_bytes"] == 50_000_000_000
    weights = 8_030_261_248 * 2
    activation = 8192 * (2 * 4096 + 2 * 14336) * 2 + 1024 * 128256 * 4
    pool = 50_000_000_000 - weights - 8192 * 128 * 2 - activation - OVERHEAD  # rotary cache
    assert doc["memory_per_gpu"]["kv_pool_bytes"] == pool
    # 8 KV heads x 256 x 2 bytes x 16 tokens a block, 32 layers in the group
    blocks = pool // (16 * 4096) // 32
    assert concurrency(doc)[:3] == (blocks, 512, blocks // 512)


def tiny_tokenizer(path: Path) -> Path:
    """A word-level tokenizer trained here: one token per word, and punctuation split off
    (the Whitespace pre-tokenizer splits on \\w+|[^\\w\\s]+)."""
    tokenizers = pytest.importorskip("tokenizers")
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    trainer = tokenizers.trainers.WordLevelTrainer(special_tokens=["[UNK]"])
    tokenizer.train_from_iterator(["the cat sat on the mat ."], trainer)
    tokenizer.save(str(path))
    return path


def test_text_measures_tokens_per_word_with_the_models_tokenizer(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    config = Path(__file__).resolve().parent / "data" / "llama-3.1-8b.json"
    (folder / "config.json").write_bytes(config.read_bytes())
    tiny_tokenizer(folder / "tokenizer.json")
    text = tmp_path / "text.txt"
    text.write_text("the cat sat. the dog sat on the mat.\n")  # 9 words; 11 tokens
    doc = serve(str(folder), "--gpu", "h100-sxm", "--text", str(text), "--price", "3.6",
                "--concurrency", "1")
    est = doc["estimates"]
    assert (est["text_tokens"], est["text_words"]) == (11, 9)
    assert est["tokens_per_word"] == pytest.approx(11 / 9)
    assert est["usd_per_million_output_words"] == pytest.approx(
        est["usd_per_million_output_tokens"] * 11 / 9)
    # a preset has no tokenizer beside it: --tokenizer names one
    given = serve("llama3-8b", "--gpu", "h100-sxm", "--text", str(text), "--tokenizer",
                  str(folder))
    assert given["estimates"]["text_tokens"] == 11
    missing = runner.invoke(app, ["serve", "llama3-8b", "--gpu", "h100-sxm", "--text",
                                  str(text)])
    assert missing.exit_code == 2
    assert "has no tokenizer.json beside it; give --tokenizer PATH" in missing.stderr


# ---- hybrids: Mamba-2 and gated DeltaNet layers beside attention -------------------------------
# vLLM keeps one page of state per state layer and request (MambaSpec), in the model's dtype
# (mamba_cache_dtype and mamba_ssm_cache_dtype "auto"), of K - 1 convolution inputs and the
# recurrent state, split by tp (mamba_utils.MambaStateShapeCalculator). With prefix caching off
# (vLLM's default for hybrids) it raises the attention block to the smallest multiple of 16
# tokens whose page holds that state, and pads the state page to the attention page
# (HybridAttentionMambaModelConfig). Groups as for windowed layers: each kind in groups of the
# smaller kind's count; a state group takes one block per request.

def granite_h_tiny_weights(tp: int) -> int:
    """Parameters of Granite 4.0 H Tiny on one GPU: d 1,536, V 100,352 (a multiple of 64,
    tied), 40 layers of 2 norms and an MoE (router 64 x d, 64 experts of 512, a shared expert
    of 1,024, each gate, up and down split by tp); 4 attention layers (q, o: 12 heads of 128;
    k, v: 4 KV heads); 36 Mamba-2 mixers (MambaMixer2: in_proj of z, x, B, C, dt rows
    d_in + d_in + 2 G' N + H, the convolution of d_in + 2 G' N channels with a bias, dt_bias,
    A, D per head and the gated norm, all split by tp; out_proj split by column), where
    G' = 1 group at tp 1 and a copy of it on each GPU at tp 2."""
    d = 1536
    embedding = 100352 // tp * d + d  # and the final norm
    moe = 64 * d + 64 * 3 * d * (512 // tp) + 3 * d * (1024 // tp)
    attention = 2 * d * (12 // tp * 128) + 2 * d * (max(1, 4 // tp) * 128)
    groups = 1 if tp == 1 else tp
    channels = 3072 + 2 * groups * 128
    mamba = ((3072 + channels + 48) // tp * d + channels // tp * (4 + 1) + 3 * (48 // tp)
             + 3072 // tp + d * (3072 // tp))
    total = embedding + 40 * (2 * d + moe) + 4 * attention + 36 * mamba
    assert total == {1: 6_939_037_248, 2: 3_478_647_840}[tp]  # at tp 1: transformers' count
    return total


def test_granite_4_h_tiny_at_tp_1_and_2_pads_the_state_to_one_attention_block() -> None:
    # 40 layers: 4 attention (12 heads of 128, 4 KV heads), 36 Mamba-2 (d_in 3,072, 48 heads
    # of 64, 1 group, N 128, kernel 4); context 131,072
    t = 131_072
    for tp, kv_heads, groups in ((1, 4, 1), (2, 2, 2)):  # 1 group on 2 GPUs: a copy on each
        conv = 3 * (3072 + 2 * groups * 128) // tp
        recurrent = 48 // tp * 64 * 128
        state = (conv + recurrent) * 2
        token = kv_heads * (128 + 128) * 2  # one token of one attention layer
        block = 16 * -(-state // (16 * token))
        page = block * token
        assert (state, token, block, page) == {1: (806_400, 2_048, 400, 819_200),
                                               2: (403_968, 1_024, 400, 409_600)}[tp]
        # groups of 4 layers: 1 of attention, 9 of state
        num_blocks = 40 * GIB // page // 4
        per_request = -(-t // block) + 9
        assert per_request == 328 + 9
        doc = serve("granite-4.0-h-tiny", "--gpu", "h100-sxm", "--tp", str(tp),
                    "--kv-memory", "40GiB")
        assert concurrency(doc) == (num_blocks, per_request, num_blocks // per_request,
                                    num_blocks / per_request)
        assert (num_blocks, num_blocks // per_request) == {1: (13_107, 38),
                                                           2: (26_214, 77)}[tp]
        blocks = doc["kv_blocks"]
        assert (blocks["block_size"], blocks["page_bytes"], blocks["state_page_bytes"],
                blocks["layers_per_group"]) == (block, page, state, 4)
        assert sorted(g["state"] for g in blocks["groups"]) == [False, *[True] * 9]
        assert {g["layers"] for g in blocks["groups"]} == {4}
        memory = doc["memory_per_gpu"]
        assert memory["weights_bytes"] == granite_h_tiny_weights(tp) * 2
        assert memory["kv_bytes_per_token"] == 4 * token
        assert memory["kv_bytes_per_request"] == per_request * page * 4
        assert memory["state_bytes_per_request"] == 9 * page * 4 == 36 * page


def test_qwen3_next_at_tp_4_replicates_the_kv_head_and_splits_the_deltanet_state() -> None:
    # 48 layers: 12 attention (16 heads of 256, 2 KV heads: one per GPU at tp 4), 36 gated
    # DeltaNet (16 key heads and 32 value heads of 128, kernel 4)
    conv = 3 * (2 * 16 * 128 + 32 * 128) // 4  # 3 x 2,048
    recurrent = 32 // 4 * 128 * 128
    state = (conv + recurrent) * 2
    token = 1 * (256 + 256) * 2
    block = 16 * -(-state // (16 * token))
    page = block * token
    assert (state, block, page) == (274_432, 272, 278_528)
    # 12 attention layers and 36 state layers: groups of 12, 1 of attention and 3 of state
    num_blocks = 20 * GIB // page // 12
    per_request = -(-32_768 // 272) + 3
    assert (num_blocks, per_request) == (6_425, 124)
    doc = serve("qwen3-next-80b-a3b", "--gpu", "h100-sxm", "--tp", "4", "--kv-memory",
                "20GiB", "--max-model-len", "32768")
    assert concurrency(doc) == (6_425, 124, 51, 6_425 / 124)
    assert doc["memory_per_gpu"]["state_bytes_per_request"] == 3 * page * 12
    assert doc["memory_per_gpu"]["kv_bytes_per_request"] == 124 * page * 12
    # on a B200 (compute capability 10.0) a head size of 256 aligns the block to 32 tokens
    b200 = serve("qwen3-next-80b-a3b", "--gpu", "b200", "--tp", "4", "--kv-memory", "20GiB",
                 "--max-model-len", "32768")
    assert b200["kv_blocks"]["block_size"] == 32 * -(-state // (32 * token)) == 288


def test_a_tp_that_does_not_split_the_state_heads_is_refused() -> None:
    # Nemotron Nano 9B v2: 40 attention heads, 8 KV heads, 128 Mamba-2 heads; tp 40 divides
    # the attention heads and is a multiple of the KV heads, but does not divide 128 heads
    result = runner.invoke(app, ["serve", str(DATA / "nemotron-nano-9b-v2.json"), "--gpu",
                                 "h100-sxm", "--tp", "40"])
    assert result.exit_code == 2
    assert "tp: 40 does not divide the 128 Mamba-2 heads" in result.stderr


def test_a_hybrids_fit_table_shows_the_state_beside_the_kv() -> None:
    result = runner.invoke(app, ["serve", "granite-4.0-h-tiny", "--gpu", "h100-sxm",
                                 "--kv-memory", "40GiB"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    # 328 blocks of 400 tokens of the 4 attention layers; 9 state blocks of 4 layers each
    assert "KV cache per request (blocks of 400)" in out and "(328 blocks)" in out
    assert "State per request (padded pages)" in out and "(9 blocks)" in out
    assert "KV + state per request" in out and "(337 blocks)" in out
    assert "A state page (806,400 B per layer, in bf16) is padded to the attention block of " \
           "400 tokens (819,200 B)" in " ".join(out.split())


def test_compare_measures_cost_per_word_with_one_tokenizer(tmp_path: Path) -> None:
    """compare --text --tokenizer: every model's cost per word at the same tokens per word
    (11 tokens over 9 words), so the column compares across models."""
    tokenizer = tiny_tokenizer(tmp_path / "tokenizer.json")
    text = tmp_path / "text.txt"
    text.write_text("the cat sat. the dog sat on the mat.\n")
    result = runner.invoke(app, ["compare", "llama3-8b", "mistral-7b", "--gpu", "h100-sxm",
                                 "--price", "2.5", "--text", str(text), "--tokenizer",
                                 str(tokenizer), "--json"])
    assert result.exit_code == 0, result.stderr
    for served in json.loads(result.stdout)["serve"]:
        est = served["estimates"]
        assert (est["text_tokens"], est["text_words"]) == (11, 9)
        assert est["usd_per_million_output_words"] == pytest.approx(
            est["usd_per_million_output_tokens"] * 11 / 9)


def test_a_cost_below_a_cent_keeps_three_significant_digits() -> None:
    from specsheet.views.table import usd_text

    assert [usd_text(v, "--price") for v in (3.24e-6, 0.0111, 0.5, 12.345, 0.0)] == [
        "$0.00000324", "$0.0111", "$0.500", "$12.35", "$0"]
    table = runner.invoke(app, ["serve", "gpt2-small", "--gpu", "h100-sxm", "--price", "2.5"])
    assert "$0.0000 " not in table.stdout and "Cost per request" in table.stdout
    # as rounded: a figure that rounds up to the next power of ten has three digits still
    assert [usd_text(v, "--price") for v in (0.09996, 0.9996, 0.995)] == [
        "$0.100", "$1.00", "$0.995"]


def test_a_time_is_said_in_the_unit_it_rounds_to() -> None:
    from specsheet.views.table import seconds_text

    assert [seconds_text(v) for v in (1.234, 0.9996, 0.9994, 0.0322, 0.00099996, 0.000512)] \
        == ["1.23 s", "1.00 s", "999 ms", "32.2 ms", "1 ms", "512 µs"]  # never 1e+03 ms


def test_lfm2_at_tp_2_splits_the_short_convolutions_and_their_state() -> None:
    # LFM2-1.2B: 16 layers, 6 attention (32 heads of 64, 8 KV heads), 10 short convolutions
    # (d 2,048, kernel 3); MLP 8,192; V 65,536, tied; context 128,000. vLLM's ShortConv
    # (model_executor/layers/mamba/short_conv.py): in_proj a MergedColumnParallelLinear of
    # three d, the convolution a ColumnParallelLinear over d, out_proj row-parallel; its state
    # (short_conv_state_shape) (K - 1) x d / tp values, no recurrent state
    d, tp = 2048, 2
    state = (3 - 1) * d // tp * 2
    token = 8 // tp * (64 + 64) * 2  # one token of one attention layer
    block = 16 * -(-state // (16 * token))
    page = block * token
    assert (state, token, block, page) == (4_096, 1_024, 16, 16_384)
    # 6 attention and 10 state layers: groups of 6, 1 of attention and 2 of state
    num_blocks = 10 * GIB // page // 6
    per_request = -(-128_000 // block) + 2
    doc = serve(str(DATA / "lfm2-1.2b.json"), "--gpu", "h100-sxm", "--tp", str(tp),
                "--kv-memory", "10GiB")
    assert concurrency(doc) == (num_blocks, per_request, num_blocks // per_request,
                                num_blocks / per_request)
    assert (num_blocks, per_request) == (109_226, 8_002)
    blocks = doc["kv_blocks"]
    assert (blocks["block_size"], blocks["page_bytes"], blocks["state_page_bytes"],
            blocks["layers_per_group"]) == (block, page, state, 6)
    memory = doc["memory_per_gpu"]
    assert memory["state_bytes_per_request"] == 2 * page * 6
    attention = 2 * d * (32 // tp * 64) + 2 * d * (8 // tp * 64) + 2 * 64  # q/k norms
    conv = 3 * d // tp * d + d // tp * 3 + d * (d // tp)
    layer = 2 * d + 3 * d * (8192 // tp)
    weights = 65536 // tp * d + d + 16 * layer + 6 * attention + 10 * conv
    assert memory["weights_bytes"] == weights * 2
    # at tp 1, the same sum is transformers' count
    assert 65536 * d + d + 16 * (2 * d + 3 * d * 8192) + 6 * (2 * d * 2048 + 2 * d * 512
                                                              + 128) \
        + 10 * (4 * d * d + 3 * d) == 1_170_340_608


def test_a_tp_that_does_not_split_the_short_convolutions_is_refused() -> None:
    # 4 heads of 32 and a d_ff of 408 split 4 ways; a short convolution's 102 channels do not
    # (vLLM's divide() in short_conv_state_shape asserts)
    from specsheet.plan.parallel import tp_problem

    spec = ModelSpec.create(layers=2, d_model=102, heads=4, head_dim=32, vocab=128,
                            context=64, layer_types=["short_conv", "attention"], ssm_conv=3)
    problem = tp_problem(spec, 4)
    assert problem is not None
    assert problem.what == "does not divide the short convolutions' width 102"
    assert tp_problem(spec, 2) is None
