"""Speculative decoding as vLLM reserves memory for it (plan/speculative.py, docs/serving.md):
each figure derived here from the shapes of vLLM's draft modules (llama_eagle.py,
llama_eagle3.py, the MTP module), the published sizes of the drafts, or a second formulation
of the same model, never by calling the code under test."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import specsheet
from specsheet.cli.app import app
from tests.commands import serve_json as serve
from tests.commands import serve_refused as refused

GIB = 2**30
EAGLE3 = str(Path(__file__).parent / "data" / "vllm_logs" / "eagle3-llama3.1-instruct-8b.json")


def test_an_eagle3_head_is_its_layer_fc_norms_own_head_and_token_map() -> None:
    # Eagle3LlamaForCausalLM for Llama 3.1 8B (d 4096, 32 heads of 128, 8 KV heads, ff 14336):
    # the one layer's qkv_proj reads embeds + hidden states (2 x 4096), o_proj, gate/up/down;
    # input_layernorm, hidden_norm, post_attention_layernorm; fc [4096, 3 x 4096]; the final
    # norm; lm_head [draft_vocab_size 32,000, 4096]; draft_id_to_target_id int64 [32,000]. The
    # embedding is the target's (pp 1). bf16, as the target loads.
    d, ff, qkv = 4096, 14336, (32 + 2 * 8) * 128
    params = qkv * 2 * d + d * d + 3 * d * ff + 3 * d + d * 3 * d + d + 32000 * d
    assert params == 424_689_664
    rotary = 2048 * 128 * 2  # its own cos/sin cache: max_position_embeddings 2048
    doc = serve("llama3.1-8b", "--gpu", "h100-sxm", "--tokens", "8k", "--speculative-method",
                "eagle3", "--draft", EAGLE3, "--speculative-tokens", "3")
    spec = doc["speculative"]
    assert spec["draft_weights_bytes"] == params * 2 + 32000 * 8 + rotary == 850_159_616
    assert (spec["method"], spec["tokens"], spec["draft_layers"]) == ("eagle3", 3, 1)
    # without a method vLLM reads it from the draft's name ("eagle3" in it), as here
    named = serve("llama3.1-8b", "--gpu", "h100-sxm", "--tokens", "8k", "--draft", EAGLE3,
                  "--speculative-tokens", "3")
    assert named["speculative"] == spec
    # its layer caches like one of the target's: 8 KV heads of 128, K and V, bf16
    assert spec["draft_kv_bytes_per_token"] == 8 * 128 * 2 * 2
    assert spec["draft_kv_bytes_per_block"] == 16 * 4096
    memory = doc["memory_per_gpu"]
    assert memory["buffers_bytes"] == 850_159_616 + 131_072 * 128 * 2  # and the target's rotary
    # at tp 2 the layer's projections and the head's rows halve; fc, the norms, the map stay
    tp2 = serve("llama3.1-8b", "--gpu", "h100-sxm", "--tp", "2", "--tokens", "8k",
                "--speculative-method", "eagle3", "--draft", EAGLE3, "--speculative-tokens", "3")
    half = qkv * 2 * d // 2 + d * d // 2 + 3 * d * ff // 2 + 3 * d + d * 3 * d + d + 16000 * d
    assert tp2["speculative"]["draft_weights_bytes"] == half * 2 + 32000 * 8 + rotary
    assert tp2["speculative"]["draft_kv_bytes_per_token"] == 4 * 128 * 2 * 2


def test_an_eagle_head_has_no_input_norm_and_shares_embedding_and_head(tmp_path: Path) -> None:
    # EagleLlamaForCausalLM (llama_eagle.py): the first layer's input_layernorm is an
    # Identity, fc is nn.Linear(2d, d, bias=False); embed_tokens and lm_head are the target's
    config = json.loads(Path(EAGLE3).read_text(encoding="utf-8"))
    config.pop("draft_vocab_size")
    config.update(architectures=["LlamaForCausalLM"], max_position_embeddings=131072,
                  rope_scaling={"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                "original_max_position_embeddings": 8192,
                                "rope_type": "llama3"}, rope_theta=500000.0)
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    d, ff = 4096, 14336
    params = 48 * 128 * d + d * d + 3 * d * ff + d + d * 2 * d
    doc = serve("llama3.1-8b", "--gpu", "h100-sxm", "--tokens", "8k", "--speculative-method",
                "eagle", "--draft", str(tmp_path), "--speculative-tokens", "4")
    # the same rotary cache as the target's (one instance per shape): none of its own
    assert doc["speculative"]["draft_weights_bytes"] == params * 2 == 503_324_672


def test_a_draft_model_is_the_whole_small_model_and_its_layers_in_every_block() -> None:
    # Llama 3.2 1B: 1,235,814,400 parameters (tied embedding), bf16, and its rotary cache
    # (131,072 positions x 64); 16 layers of 8 KV heads of 64 cache 32,768 B a token
    pool = 40 * GIB
    doc = serve("llama3.1-8b", "--gpu", "h100-sxm", "--tokens", "8k", "--draft", "llama3.2-1b",
                "--speculative-tokens", "4", "--kv-memory", str(pool))
    spec = doc["speculative"]
    assert spec["method"] == "draft_model" and spec["draft"] == "llama3.2-1b"
    assert spec["draft_weights_bytes"] == 1_235_814_400 * 2 + 131_072 * 64 * 2
    assert spec["draft_kv_bytes_per_token"] == 16 * 8 * 64 * 2 * 2 == 32_768
    # one full-attention type, two page sizes (UniformTypeKVCacheSpecs): a block costs the
    # target's 32 pages of 16 x 4,096 and the draft's 16 of 16 x 2,048
    blocks = doc["kv_blocks"]
    assert blocks["num_blocks"] == pool // (32 * 16 * 4096 + 16 * 16 * 2048) == 16_384
    assert blocks["vllm_kv_tokens"] == 16_384 * 16
    assert doc["memory_per_gpu"]["kv_bytes_per_request"] == 512 * (32 * 65536 + 16 * 32768)
    # the library takes the same options
    served = specsheet.serve(specsheet.load("llama3.1-8b"), "h100-sxm", max_model_len=8192,
                             draft="llama3.2-1b", speculative_tokens=4, kv_memory=pool)
    assert served.plan.binding.num_blocks == 16_384


def test_mtp_is_one_more_decoder_layer_of_the_checkpoint_and_its_extras() -> None:
    # DeepSeek-V3's MTP module: a decoder layer like layer 60 (MLA and 256 experts, fp8 in
    # 128 x 128 blocks), enorm, hnorm and the shared head's norm (7,168 each) and eh_proj
    # [7168, 14336] in bf16, whole; embedding and head shared with the target. A 62-layer
    # model's extra layer is that decoder layer, counted the other way round
    common = ["--gpu", "h200", "--gpus", "8", "--quant", "fp8-block", "--tokens", "8k",
              "--kv-memory", "40GiB"]
    base = serve("deepseek-v3", *common, "--set", "layers=61")["memory_per_gpu"]
    more = serve("deepseek-v3", *common, "--set", "layers=62")
    layer = more["memory_per_gpu"]["weights_bytes"] - base["weights_bytes"]
    extras = (3 * 7168 + 7168 * 14336) * 2
    mtp = serve("deepseek-v3", *common, "--speculative-method", "mtp")
    spec = mtp["speculative"]
    assert spec["draft_weights_bytes"] == layer + extras == 1_661_046_944
    assert (spec["tokens"], spec["draft_layers"], spec["draft"]) == (1, 1, None)  # n_predict
    # its MLA layer caches like the others: 62 layers in every block of 64 (FlashMLA)
    assert mtp["kv_blocks"]["num_blocks"] == more["kv_blocks"]["num_blocks"] == 9_395
    assert spec["draft_kv_bytes_per_token"] == (512 + 64) * 2
    # the checkpoint's own config says it has one layer; Kimi K2's says none
    data = Path(__file__).parent / "data"
    assert specsheet.load(str(data / "deepseek-v3.json")).mtp_layers == 1
    assert specsheet.load(str(data / "kimi-k2.json")).mtp_layers == 0
    assert specsheet.load("deepseek-v3").mtp_layers == 1


def test_mtp_tokens_past_its_layers_must_be_a_multiple_of_them(tmp_path: Path) -> None:
    config = json.loads((Path(__file__).parent / "data" / "deepseek-v3.json").read_text(
        encoding="utf-8"))
    config["num_nextn_predict_layers"] = 2
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    args = [str(tmp_path), "--gpu", "h200", "--gpus", "8", "--tokens", "8k",
            "--speculative-method", "mtp"]
    assert serve(*args)["speculative"]["tokens"] == 2  # n_predict by default
    assert serve(*args, "--speculative-tokens", "4")["speculative"]["draft_layers"] == 2
    assert "vLLM needs a multiple of 2" in refused(*args, "--speculative-tokens", "3")


def test_the_lookahead_slots_hold_shorter_requests_one_block_more_not_the_longest() -> None:
    # num_lookahead_tokens = K for a draft, 0 for ngram; allocate_slots caps the slots at
    # max_model_len, so a request of max_model_len holds cdiv(max_model_len, 16) blocks either
    # way, and one of 1,024 + 256 = 1,280 tokens (80 blocks) holds 81 with K = 4
    common = ["--gpu", "h100-sxm", "--tokens", "8k", "--kv-memory", "40GiB", "--prompt", "1024",
              "--output", "256", "--max-num-seqs", "100000"]
    ngram = serve("llama3.1-8b", *common, "--speculative-method", "ngram",
                  "--speculative-tokens", "4")
    assert ngram["speculative"]["lookahead_slots"] == 0
    assert ngram["speculative"]["draft_weights_bytes"] == 0
    assert ngram["kv_blocks"]["num_blocks"] == 40 * GIB // (32 * 65536) == 20_480
    assert ngram["estimates"]["concurrency"] == 20_480 // 80
    drafted = serve("llama3.1-8b", *common, "--draft", "llama3.2-1b", "--speculative-tokens",
                    "4")
    blocks = drafted["kv_blocks"]
    assert drafted["speculative"]["lookahead_slots"] == 4
    assert blocks["blocks_per_request"] == 8192 // 16
    assert drafted["estimates"]["concurrency"] == blocks["num_blocks"] // 81
    assert drafted["max_concurrency"] == blocks["num_blocks"] // 512


def test_the_logged_eagle3_pool_counts_the_heads_layer_in_every_block() -> None:
    # vllm-ascend issue 2667 (tests/data/vllm_logs.yaml): 34,184,553,369 B in blocks of 128;
    # 1,975 blocks of 33 layers x 128 x 4,096 B; the target's 32 layers alone: 2,037
    pool = 34_184_553_369
    args = ["llama3.1-8b", "--gpu", "h100-sxm", "--tokens", "128", "--block-size", "128",
            "--kv-memory", str(pool)]
    alone = serve(*args)["kv_blocks"]
    assert alone["num_blocks"] == pool // (32 * 128 * 4096) == 2_037
    drafted = serve(*args, "--speculative-method", "eagle3", "--draft", EAGLE3,
                    "--speculative-tokens", "2")["kv_blocks"]
    assert drafted["num_blocks"] == pool // (33 * 128 * 4096) == 1_975
    assert drafted["vllm_kv_tokens"] == 252_800


def test_the_table_names_the_draft() -> None:
    result = CliRunner().invoke(app, ["serve", "llama3.1-8b", "--gpu", "h100-sxm", "--tokens",
                                      "8k", "--draft", "llama3.2-1b", "--speculative-tokens",
                                      "4"])
    assert result.exit_code == 0
    assert "Draft weights (draft_model: llama3.2-1b)" in result.stdout
    assert "2,488,406,016" in result.stdout
    assert "Draft KV per token (16 layers)" in result.stdout
    assert "Lookahead slots a request (4 tokens a step)" in result.stdout
    plain = serve("llama3.1-8b", "--gpu", "h100-sxm", "--tokens", "8k")
    assert plain["speculative"] is None


def test_what_vllm_refuses_or_specsheet_does_not_model_is_one_line() -> None:
    # draft_model: the same vocabulary (verify_equal_vocab_size_if_draft_model)
    assert "vocabulary of 50,257 tokens" in refused(
        "llama3.1-8b", "--gpu", "h100-sxm", "--draft", "gpt2-small", "--speculative-tokens", "2")
    # a draft file that does not exist names the file and the draft
    assert "(the draft model)" in refused(
        "llama3.1-8b", "--gpu", "h100-sxm", "--draft", "no/such.json", "--speculative-tokens",
        "2")
    # a draft whose heads tp does not divide
    assert "the draft llama3.2-1b at tp 64 (vLLM's draft tp is the target's): 64 does not " \
        "divide the 32 attention heads" in refused(
            "llama3-70b", "--gpu", "h100-sxm", "--tp", "64", "--draft", "llama3.2-1b",
            "--speculative-tokens", "2", "--tokens", "8k")
