"""What vLLM reserves for the features people turn on, each derived here from the vLLM code
docs/serving.md cites: prefix caching of a hybrid's state (--enable-prefix-caching,
--mamba-cache-mode), CPU KV offload (--kv-offload), and PyTorch's caching allocator's tails
under the weights (plan/allocator.py)."""

from __future__ import annotations

import pytest

from specsheet.plan.allocator import allocated_bytes
from tests.commands import serve_json as serve
from tests.commands import serve_refused as refused

GIB, MIB = 2**30, 2**20


# ---- PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp at 001074d2) ---------------

@pytest.mark.parametrize(("size", "block"), [
    (100, 512),  # round_size: 512 at least
    (7168, 7168),  # a multiple of 512, in the small pool
    (MIB, MIB),  # 1 MiB is still small (kSmallSize)
    (4 * MIB + 1, 4 * MIB + 512),  # cut from a 20 MiB buffer, the rest over 1 MiB: split
    (35 * MIB, 36 * MIB),  # a 36 MiB segment, 1 MiB left: not split (remaining > kSmallSize)
    (int(67.5 * MIB), 68 * MIB),  # half a MiB left: kept
    (int(742.5 * MIB), int(742.5 * MIB)),  # 1.5 MiB left: split off
    (48 * MIB, 48 * MIB),  # a whole segment
])
def test_the_block_a_tensor_holds(size: int, block: int) -> None:
    assert allocated_bytes(size) == block


def test_a_model_whose_tensors_fill_their_segments_has_no_tails() -> None:
    # Llama 3 8B: qkv 48 MiB, o 32, gate_up 224, down 112, embedding 1,002 MiB, norms of 8 KiB
    assert serve("llama3-8b", "--gpu", "h100-sxm")["memory_per_gpu"]["allocator_bytes"] == 0


def test_a_quantized_checkpoint_has_no_tails_counted() -> None:
    memory = serve("gpt-oss-120b", "--gpu", "h100-sxm")["memory_per_gpu"]
    assert memory["allocator_bytes"] == 0


# ---- prefix caching of a hybrid's state ----------------------------------------------------------

TINY = ("granite-4.0-h-tiny", "--gpu", "h100-sxm", "--kv-memory", "40GiB")


def test_prefix_caching_changes_nothing_for_a_model_without_state() -> None:
    plain = serve("llama3-8b", "--gpu", "h100-sxm")
    cached = serve("llama3-8b", "--gpu", "h100-sxm", "--enable-prefix-caching")
    assert cached["request"]["prefix_caching"] and not plain["request"]["prefix_caching"]
    for doc in (plain, cached):
        doc["request"].pop("prefix_caching")
    assert cached == plain


def test_without_prefix_caching_a_hybrid_keeps_one_state_page() -> None:
    # Granite 4.0 H Tiny: 36 Mamba-2 layers (state page 806,400 B at tp 1) and 4 attention
    # layers of 4 KV heads of 128 (2,048 B a token in bf16): a block of 16 x cdiv(806,400,
    # 16 x 2,048) = 400 tokens; 9 state groups of 4 and one attention group
    doc = serve(*TINY)
    k = doc["kv_blocks"]
    assert doc["request"]["mamba_cache_mode"] == "none"
    assert (k["block_size"], k["state_pages_per_request"]) == (400, 1)
    assert k["blocks_per_request"] == -(-131072 // 400) + 9


def test_align_keeps_two_state_pages_a_request() -> None:
    # MambaSpec.max_memory_usage_bytes (v1/kv_cache_interface.py at bc8282e6): align is
    # page x (2 + num_speculative_blocks); the block is chosen as without prefix caching
    doc = serve(*TINY, "--enable-prefix-caching", "--mamba-cache-mode", "align")
    k = doc["kv_blocks"]
    assert (k["block_size"], k["state_pages_per_request"]) == (400, 2)
    assert k["blocks_per_request"] == -(-131072 // 400) + 9 * 2
    assert k["num_blocks"] == 40 * GIB // (400 * 2048) // 4
    assert doc["max_concurrency"] == k["num_blocks"] // k["blocks_per_request"]


def test_all_keeps_a_state_page_a_block_on_chunk_aligned_blocks() -> None:
    # the default for a Mamba-2 hybrid; the block is the lowest multiple of lcm(chunk 256,
    # 16) holding cdiv(806,400, 2,048) = 394 tokens: 512, vLLM's own example in
    # HybridAttentionMambaModelConfig; max_memory_usage_bytes: cdiv(max_model_len, block) pages
    doc = serve(*TINY, "--enable-prefix-caching")
    k = doc["kv_blocks"]
    assert doc["request"]["mamba_cache_mode"] == "all"
    assert (k["block_size"], k["page_bytes"]) == (512, 512 * 2048)
    assert k["state_pages_per_request"] == 131072 // 512
    assert k["blocks_per_request"] == 256 + 9 * 256
    assert doc["memory_per_gpu"]["state_bytes_per_request"] == 9 * 256 * 4 * 512 * 2048
    assert doc["max_concurrency"] == 40 * GIB // (512 * 2048) // 4 // 2560 == 4


def test_a_gated_deltanet_hybrid_takes_align() -> None:
    doc = serve("qwen3-next-80b-a3b", "--gpu", "h100-sxm", "--tp", "4", "--kv-memory", "20GiB",
                "--enable-prefix-caching")
    assert doc["request"]["mamba_cache_mode"] == "align"
    assert doc["kv_blocks"]["state_pages_per_request"] == 2


@pytest.mark.parametrize(("args", "text"), [
    ((*TINY, "--mamba-cache-mode", "align"),
     "option --mamba-cache-mode: mamba cache mode align keeps state pages for prefix caching, "
     "which is off"),
    ((*TINY, "--enable-prefix-caching", "--mamba-cache-mode", "none"),
     "option --mamba-cache-mode: with prefix caching vLLM keeps state pages in mode align or "
     "all"),
    (("llama3-8b", "--gpu", "h100-sxm", "--enable-prefix-caching", "--mamba-cache-mode", "all"),
     "option --mamba-cache-mode: mamba cache mode all keeps state pages, and the model has no "
     "state layers"),
    (("qwen3-next-80b-a3b", "--gpu", "h100-sxm", "--tp", "4", "--enable-prefix-caching",
      "--mamba-cache-mode", "all"), "the Mamba-2 scan's chunk, which this model's state layers "
     "have not"),
    (("mamba-130m", "--gpu", "h100-sxm", "--enable-prefix-caching"),
     "option --enable-prefix-caching: prefix caching of a model of state layers only is not "
     "modelled"),
    ((*TINY, "--mamba-cache-mode", "some"), "option --mamba-cache-mode: unknown mamba cache "
     "mode 'some'; expected one of none, align, all"),
])
def test_what_vllm_would_not_run_is_refused(args: tuple[str, ...], text: str) -> None:
    assert text in refused(*args)


# ---- CPU KV offload ------------------------------------------------------------------------------

def test_kv_offload_is_cpu_blocks_of_every_layer_on_every_gpu() -> None:
    # CPUOffloadingSpec (v1/kv_offload/cpu/spec.py): num_blocks = cpu_bytes_to_use //
    # (page x KV-cache tensors x world size). Llama 3 8B: a block of 16 tokens of 8 KV heads
    # x (128 + 128) x 2 bytes, 32 layers: 2 MiB, whatever the tp (the heads split over it)
    for tp in ("1", "2", "4"):
        doc = serve("llama3-8b", "--gpu", "h100-sxm", "--tp", tp, "--kv-offload", "64GiB")
        offload = doc["kv_offload"]
        assert offload["bytes_per_block"] == 16 * 8 * 256 * 2 * 32 == 2 * MIB
        assert offload["blocks"] == 64 * GIB // (2 * MIB) == 32768
        assert offload["tokens"] == 32768 * 16


def test_kv_offload_adds_no_gpu_block() -> None:
    plain = serve("llama3-8b", "--gpu", "h100-sxm")
    offload = serve("llama3-8b", "--gpu", "h100-sxm", "--kv-offload", "64GiB")
    assert plain["kv_offload"] is None
    assert offload["kv_blocks"] == plain["kv_blocks"]
    assert offload["max_concurrency"] == plain["max_concurrency"]


def test_kv_offload_of_a_hybrid_counts_tokens_as_the_gpu_does() -> None:
    # one block a group per block_size tokens: blocks // groups x block_size, as vLLM's "GPU
    # KV cache size" counts the GPU's (10 groups of 4 layers; a 400-token block of 819,200 B)
    offload = serve(*TINY, "--kv-offload", "64GiB")["kv_offload"]
    assert offload["bytes_per_block"] == 819200 * 4
    assert offload["tokens"] == 64 * GIB // (819200 * 4) // 10 * 400


@pytest.mark.parametrize(("value", "text"), [
    ("0", "option --kv-offload: expected a positive number of bytes, got 0"),
    ("lots", "option --kv-offload: 'lots' is not a quantity"),
])
def test_a_bad_kv_offload(value: str, text: str) -> None:
    assert text in refused("llama3-8b", "--gpu", "h100-sxm", "--kv-offload", value)
