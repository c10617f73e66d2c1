"""What specsheet does not read yet, model_type by model_type (transformers 5.24).

One table serves the refusal of a config.json and the census of docs/models.md
(scripts/census.py): for each decoder-only model_type of transformers that no family reads, the
architecture feature still missing and the supported family closest to it. A suggestion to
relabel the file is made only where transformers builds the same model from it (``same``);
otherwise the refusal names the feature and says that relabelling would give other figures.
Reasons marked "(from its modeling code)" were read from the modules transformers builds the
model from (its modular file's bases), not yet from a published checkpoint.
"""

from specsheet.compiled import NamedTuple


class Unsupported(NamedTuple):
    feature: str  # the architecture feature specsheet does not read yet
    closest: str = ""  # the supported family nearest to it ("" when none is near)
    differs: str = ""  # what that family counts differently
    same: bool = False  # transformers builds ``closest``'s model from this config class
    # another model class, but the same parameters and FLOPs as ``closest``'s for the same keys
    # and defaults (checked against transformers on the meta device)
    identical: bool = False


_MLA = "deepseek_v3"
_OWN = "(from its modeling code)"

UNSUPPORTED: dict[str, Unsupported] = {
    # ---- recurrent and state-space mixers
    "zamba": Unsupported("Mamba-1 layers with shared attention blocks reused across depth",
                         "mamba", "no attention blocks"),
    "zamba2": Unsupported("Mamba-2 layers with shared attention blocks and LoRA adapters",
                          "granitemoehybrid", "no shared blocks, no adapters"),
    "rwkv": Unsupported("RWKV time-mix and channel-mix recurrence"),
    "xlstm": Unsupported("xLSTM (mLSTM) blocks"),
    "recurrent_gemma": Unsupported("RG-LRU recurrent blocks with local attention (Griffin)"),
    "lfm2_moe": Unsupported("short-convolution hybrid with routed experts", "lfm2",
                            "dense MLPs only"),
    "lfm3": Unsupported(f"short-convolution hybrid with a per-head attention gate and sandwich "
                        f"norms {_OWN}", "lfm2", "no attention gate, two norms per block"),
    "bailing_hybrid": Unsupported(f"short-convolution or linear layers with MLA and shared "
                                  f"experts {_OWN}", _MLA, "no recurrent layers"),
    "olmo_hybrid": Unsupported(f"linear-attention (DeltaNet-style) layers beside OLMo 3 "
                               f"attention {_OWN}", "qwen3_next", "gated attention and experts"),
    "kimi_linear": Unsupported("Kimi Delta Attention (linear) layers beside MLA, with shared "
                               "experts", "qwen3_next", "gated DeltaNet and plain attention"),
    "minimax": Unsupported("lightning (linear) attention layers beside softmax attention, with "
                           "routed experts", "qwen3_next", "gated DeltaNet layers"),
    "lara_mini": Unsupported(f"linear-attention hybrid with short convolutions and shared "
                             f"experts {_OWN}", "qwen3_next", "its own layer keys"),
    "doge": Unsupported("dynamic mask attention and cross-domain MoE (Doge)"),
    "hrm_text": Unsupported(f"hierarchical recurrent reasoning modules {_OWN}"),
    # ---- experts under their own keys
    "flex_olmo": Unsupported(f"OLMo 2's layers with experts under FlexOlmo's keys {_OWN}",
                             "olmoe", "its own key names"),
    "jetmoe": Unsupported("mixture of attention heads and MLP experts (JetMoE)", "mixtral",
                          "dense attention"),
    "hunyuan_v1_moe": Unsupported("experts with a shared MLP and q/k norms under Hunyuan's keys",
                                  "qwen2_moe", "qkv biases and a gated shared expert"),
    "cohere2_moe": Unsupported("Command R7B layers with routed and shared experts", "cohere2",
                               "dense MLPs"),
    "granitemoeshared": Unsupported("Granite MoE with a shared MLP", "granitemoe",
                                    "no shared MLP"),
    "granitemoe_swa": Unsupported("Granite MoE with a shared MLP and sliding windows",
                                  "granitemoe", "no shared MLP, no windows"),
    "exaone_moe": Unsupported(f"EXAONE 4.0 layers with shared experts {_OWN}", "exaone4",
                              "dense MLPs"),
    "afmoe": Unsupported(f"shared experts with q/k norms and gated attention {_OWN}",
                         "qwen2_moe", "its own key names"),
    "aria_text": Unsupported("routed and shared experts under Aria's keys", "qwen2_moe",
                             "a gated shared expert"),
    "kolibri1": Unsupported(f"shared experts with q/k norms {_OWN}", "glm4_moe",
                            "its own key names"),
    "laguna": Unsupported(f"shared experts with q/k norms and gated attention {_OWN}",
                          "qwen2_moe", "its own key names"),
    "mellum": Unsupported(f"routed experts with q/k norms {_OWN}", "qwen3_moe",
                          "its own key names"),
    "flint": Unsupported(f"shared experts with q/k norms and attention sinks {_OWN}",
                         "gpt_oss", "no shared experts"),
    "hy_v3": Unsupported(f"shared experts with q/k norms {_OWN}", "qwen3_moe",
                         "no shared experts"),
    "beam": Unsupported(f"routed experts with q/k norms and sparse attention {_OWN}",
                        "qwen3_moe", "dense attention"),
    "mimo_v2_flash": Unsupported(f"shared experts with hybrid sliding-window attention {_OWN}",
                                 "glm4_moe", "no windows"),
    "solar_open": Unsupported(f"GLM-4.5-style experts under its own keys {_OWN}", "glm4_moe",
                              "its own key names and defaults"),
    "zaya": Unsupported(f"shared experts with fused projections {_OWN}", "qwen3_moe",
                        "no shared experts"),
    "sarvam_moe": Unsupported("GLM-4.5's model built from its own configuration class "
                              "(own defaults and key aliases)", "glm4_moe",
                              "the defaults of keys the file leaves out"),
    # ---- multi-head latent attention variants
    "deepseek_v32": Unsupported("MLA with the DeepSeek sparse-attention indexer", _MLA,
                                "no indexer"),
    "deepseek_v4": Unsupported(f"DeepSeek V4's attention and experts {_OWN}", _MLA,
                               "V3's layers"),
    "glm_moe_dsa": Unsupported("MLA with the DeepSeek sparse-attention indexer (GLM)", _MLA,
                               "no indexer"),
    "longcat_flash": Unsupported("MLA with shortcut-connected experts and zero-compute experts",
                                 _MLA, "every expert computes"),
    "minicpm3": Unsupported("MLA in a dense model under MiniCPM's keys and scalings", _MLA,
                            "experts"),
    "axk1": Unsupported(f"MLA with shared experts under its own keys {_OWN}", _MLA,
                        "its own key names"),
    "axk2": Unsupported(f"MLA with the sparse-attention indexer {_OWN}", _MLA, "no indexer"),
    "hy_v4": Unsupported(f"MLA with the sparse-attention indexer and shared experts {_OWN}",
                         _MLA, "no indexer"),
    "youtu": Unsupported(f"MLA in a dense model with its own keys {_OWN}", _MLA, "experts"),
    "sarvam_mla": Unsupported("DeepSeek V3's model built from its own configuration class "
                              "(own defaults and key aliases)", _MLA,
                              "the defaults of keys the file leaves out"),
    # ---- dense layers of their own
    "nemotron": Unsupported("squared-ReLU two-matrix MLP with LayerNorm1P and partial rotary",
                            "llama", "a gated MLP"),
    "arcee": Unsupported("a two-matrix ReLU-squared MLP in Llama's layers", "llama",
                         "a gated MLP"),
    "apertus": Unsupported("a two-matrix xIELU MLP with q/k norms", "llama", "a gated MLP, no "
                           "q/k norms"),
    "apertus1p5_text": Unsupported(f"Apertus layers {_OWN}", "llama", "a gated MLP"),
    "jais2": Unsupported("LayerNorms with bias and a two-matrix MLP in Llama-style layers",
                         "llama", "RMSNorms and a gated MLP"),
    "bitnet": Unsupported("ternary BitNet layers with extra sub-norms in attention and MLP",
                          "llama", "no sub-norms"),
    "diffllama": Unsupported("differential attention (two softmax maps per head, a learned "
                             "lambda and a group norm)", "llama", "plain attention"),
    "helium": Unsupported("Helium's layers and defaults", "llama",
                          "its defaults for keys the file leaves out"),
    "cwm": Unsupported("CWM's sliding-window layers (three to each full one, layer_types)",
                       "llama", "no windows"),
    "ministral": Unsupported("Ministral's per-layer sliding windows (layer_types)", "mistral",
                             "a window on every layer"),
    "ministral3": Unsupported("Mistral's model under Ministral 3's configuration class (own "
                              "defaults)", "mistral", "Mistral's defaults"),
    "granite_swa": Unsupported("Granite with sliding-window layers", "granite", "no windows"),
    "vaultgemma": Unsupported("Gemma 2's layers under VaultGemma's configuration class (own "
                              "defaults and layers)", "gemma2", "Gemma 2's defaults"),
    "hyperclovax": Unsupported("Granite's layers with optional norms after attention and the "
                               "MLP (use_post_norm)", "granite", "two norms per block"),
    "internlm3": Unsupported("Llama's model built from InternLM3's configuration class (own "
                             "defaults, qkv_bias and bias keys)", "llama", "Llama's defaults"),
    "iquestcoder": Unsupported("Llama's model built from IQuest-Coder's configuration class "
                               "(own defaults)", "llama", "Llama's defaults"),
    "dory": Unsupported(f"Gemma 3 style layers with their own keys {_OWN}", "gemma3_text",
                        "its own key names"),
    "nanochat": Unsupported("norms without parameters (on q, k and every block) and a "
                            "two-matrix MLP", "llama", "RMSNorm weights and a gated MLP"),
    "stablelm": Unsupported("StableLM's LayerNorms, optional per-head q/k LayerNorms and "
                            "parallel residual", "gpt_neox", "its own keys"),
    "persimmon": Unsupported("fused QKV with per-head q/k LayerNorms and a ReLU-squared MLP",
                             "gpt_neox", "no q/k norms"),
    "gpt_neox_japanese": Unsupported("GPT-NeoX Japanese's fused QKV and bias placement",
                                     "gpt_neox", "its biases"),
    "modernbert-decoder": Unsupported("ModernBERT layers used as a decoder (alternating local "
                                      "and global attention)"),
    "blt": Unsupported("byte latent transformer: local byte encoder and decoder around a "
                       "global model"),
    "cpmant": Unsupported("CPM-Ant's segment and position-bias embeddings"),
    "moshi": Unsupported("a speech-text model with a depth decoder over audio codebooks"),
    # ---- older families: fused QKV, learned positions, multi-query
    "codegen": Unsupported("GPT-J's block with a fused qkv_proj (CodeGen), with GPT-J's keys "
                           "and defaults; no published config.json pinned by a golden yet",
                           "gptj", identical=True),
    "openai-gpt": Unsupported("GPT-1's post-norm blocks with learned positions", "gpt2",
                              "pre-norm blocks and a final norm"),
    "ctrl": Unsupported("CTRL's sinusoidal positions and biased output head", "gpt2",
                        "learned positions"),
    "xglm": Unsupported("sinusoidal positions and a scaled embedding", "opt",
                        "learned positions"),
    "biogpt": Unsupported("BioGPT's learned positions and scaled embedding", "opt",
                          "its offset and projections"),
    "bert-generation": Unsupported("a BERT encoder stack used as a decoder", "gpt2",
                                   "post-norm and its embeddings"),
    "xlnet": Unsupported("permutation language modelling with two-stream attention"),
    "trocr": Unsupported("the text decoder of a vision encoder-decoder"),
    "gpt-sw3": Unsupported("GPT-2 (its configuration class is GPT2Config)", "gpt2",
                           same=True),
    # ---- text models of multimodal families, and models with their own vision parts
    "gemma3n_text": Unsupported("Gemma 3n's per-layer embeddings, AltUp and LAuReL blocks and "
                                "KV sharing", "gemma3_text", "none of those"),
    "gemma4_text": Unsupported(f"Gemma 4's text layers {_OWN}", "gemma3_text",
                               "Gemma 3's layers"),
    "gemma4_unified_text": Unsupported(f"Gemma 4's text layers {_OWN}", "gemma3_text",
                                       "Gemma 3's layers"),
    "qwen3_5_text": Unsupported(f"Qwen3.5's gated DeltaNet hybrid under its own keys {_OWN}",
                                "qwen3_next", "its key names"),
    "qwen3_5_moe_text": Unsupported(f"Qwen3.5-MoE's gated DeltaNet hybrid under its own keys "
                                    f"{_OWN}", "qwen3_next", "its key names"),
    "qwen4_exp_text": Unsupported(f"gated DeltaNet hybrid under its own keys {_OWN}",
                                  "qwen3_next", "its key names"),
    "inkling_text": Unsupported(f"short-convolution layers with shared experts {_OWN}",
                                "qwen3_next", "gated DeltaNet layers"),
    "inkling2_text": Unsupported(f"short-convolution layers with shared experts {_OWN}",
                                 "qwen3_next", "gated DeltaNet layers"),
    "inkling2_loop_text": Unsupported(f"looped short-convolution layers with experts {_OWN}",
                                      "qwen3_next", "gated DeltaNet layers"),
    "minimax_m3_vl_text": Unsupported(f"linear-attention hybrid with shared experts {_OWN}",
                                      "qwen3_next", "its key names"),
    "dots3_note_text": Unsupported(f"MLA with shared experts and q/k norms {_OWN}", _MLA,
                                   "its own key names"),
    "cohere_compass_text": Unsupported(f"Command R7B-style layers under their own keys {_OWN}",
                                       "cohere2", "its key names"),
    "mllama": Unsupported("Llama 3.2 Vision: cross-attention layers to image features and a "
                          "vision tower", "llama", "no cross-attention layers"),
    "emu3": Unsupported("Emu3's VQ image tokenizer beside a Llama-style language model",
                        "llama", "no VQ model"),
    "phi4_multimodal": Unsupported("Phi-4-multimodal's vision and audio encoders and LoRA "
                                   "adapters", "phi3", "the language model alone"),
    "git": Unsupported("GIT's image encoder feeding a BERT-style text decoder"),
    "idefics": Unsupported("IDEFICS's perceiver resampler and gated cross-attention layers",
                           "llama", "no cross-attention layers"),
    "chameleon": Unsupported("Chameleon's VQ image tokens in a Llama-style model with q/k "
                             "norms", "llama", "no VQ model"),
    "evolla": Unsupported("a protein encoder with cross-attention into a Llama model"),
    "mistral4": Unsupported(f"Mistral 4's multimodal layout {_OWN}", "mistral",
                            "the language model alone"),
    "pi0": Unsupported("a vision-language-action model with an action expert"),
    "fuyu": Unsupported("Fuyu: image patches projected straight into a Persimmon model",
                        "gpt_neox", "no patch projection"),
}

# transformers' causal-LM classes of encoders (a bidirectional model with a causal head) and the
# decoders of encoder-decoder models, which a decoder-only count does not describe
ENCODER_ONLY: frozenset[str] = frozenset({
    "bert", "big_bird", "camembert", "data2vec-text", "electra", "ernie", "megatron-bert",
    "reformer", "rembert", "roberta", "roberta-prelayernorm", "roc_bert", "roformer", "xlm",
    "xlm-roberta", "xlm-roberta-xl", "xmod"})
ENCODER_DECODER: frozenset[str] = frozenset({
    "bart", "bigbird_pegasus", "blenderbot", "blenderbot-small", "florence2", "marian", "mbart",
    "moss_transcribe_diarize", "musicgen", "musicgen_melody", "mvp", "pegasus", "pix2struct",
    "plbart", "pp_formulanet", "prophetnet", "t5", "t5gemma", "t5gemma2", "udop",
    "vision-encoder-decoder", "whisper"})

# the language models of multimodal families (the model_type of their text_config), by the
# family whose configuration class holds them
TEXT_MODELS: dict[str, str] = {
    "blip_text_model": "blip", "cosmos3_edge_text": "cosmos3_edge", "deepseek_ocr2_text":
    "deepseek_ocr2", "diffusion_gemma_text": "diffusion_gemma", "emu3_text_model": "emu3",
    "ernie4_5_vl_moe_text": "ernie4_5_vl_moe", "glm4v_moe_text": "glm4v_moe", "glm4v_text":
    "glm46v", "glm5_next_text": "glm5_next", "glm_ocr_text": "glm_ocr", "granite4_vision_text":
    "granite4_vision", "granite_docling_text": "granite_docling", "hunyuan_vl_text":
    "hunyuan_vl", "hy_v4_vl_text": "hy_v4_vl", "kosmos_2_5_text_model": "kosmos-2.5",
    "kosmos_2_text_model": "kosmos-2", "mistral_large4_text": "mistral_large4",
    "mllama_text_model": "mllama", "molmo2_text": "molmo2", "muse_glimmer_text":
    "muse_glimmer", "muse_spark_text": "muse_spark", "paddleocr_vl_text": "paddleocr_vl",
    "pix2struct_text_model": "pix2struct", "pp_formulanet_text": "pp_formulanet",
    "qwen2_5_omni_text": "qwen2_5_omni_thinker",
    "qwen2_vl_text": "qwen2_vl", "qwen3_omni_moe_text": "qwen3_omni_moe_thinker",
    "qwen3_vl_moe_text": "qwen3_vl_moe", "step3p5": "step3p7",
    "unlimited_ocr_text": "unlimited_ocr",
}

# multimodal wrappers: specsheet reads their language model from text_config, and counts the
# vision tower and projector of those in hf_config/vision.py's WRAPPER_ENCODERS (the others'
# are not counted yet); a file of one without text_config is refused
WRAPPERS: frozenset[str] = frozenset({
    "apertus1p5", "aria", "aya_vision", "blip", "blip-2", "cohere2_vision", "cohere_compass",
    "cosmos3_edge", "cosmos3_omni", "deepseek_ocr2", "deepseek_vl", "deepseek_vl_hybrid",
    "diffusion_gemma", "dots3_note", "ernie4_5_vl_moe", "exaone4_5", "fast_vlm", "gemma3",
    "gemma3n", "gemma4", "gemma4_assistant", "gemma4_unified", "gemma4_unified_assistant",
    "glm46v", "glm4v", "glm4v_moe", "glm5_next", "glm_ocr", "glmga", "got_ocr2",
    "granite4_vision", "granite_docling", "hunyuan_vl", "hy_v4_vl", "hyperclovax_vision_v2",
    "idefics2", "idefics3", "inkling2", "inkling2_loop", "inkling_mm_model", "instructblip",
    "instructblipvideo", "internvl", "janus", "kimi_k25", "kosmos-2", "kosmos-2.5", "lfm2_vl",
    "lfm3_vl", "lighton_ocr", "llama4", "llava", "llava_next", "llava_next_video",
    "llava_onevision", "minicpm_ocr", "minicpmv4_6", "minicpmv4_7", "minimax_m3_vl",
    "mistral3", "mistral_large4", "molmo2", "muse_glimmer", "muse_spark", "nemotron_h_omni",
    "ovis2", "paddleocr_vl", "paligemma", "perception_lm", "pp_chart2table", "qianfan_ocr",
    "qwen2_5_omni_thinker", "qwen2_5_vl", "qwen2_vl", "qwen3_5", "qwen3_5_moe",
    "qwen3_omni_moe_thinker", "qwen3_vl", "qwen3_vl_moe", "qwen4_exp", "shieldgemma2",
    "smolvlm", "step3p7", "unlimited_ocr", "video_llama_3", "video_llava", "vipllava"})


def refusal(model_type: str) -> str | None:
    """Why a known model_type is refused, as the rest of a one-line message, or None for a
    model_type this table does not know."""
    if model_type in ENCODER_ONLY:
        return "it is an encoder (BERT-style), and specsheet counts decoder-only models"
    if model_type in ENCODER_DECODER:
        return "it is an encoder-decoder model, and specsheet counts decoder-only models"
    if model_type in WRAPPERS:
        return ("it is a multimodal wrapper, whose language model specsheet reads from "
                "text_config, and the file has none")
    if model_type in TEXT_MODELS:
        return (f"it is the language model of the multimodal family "
                f"'{TEXT_MODELS[model_type]}', whose layers specsheet does not read yet")
    entry = UNSUPPORTED.get(model_type)
    if entry is None:
        return None
    if entry.same:
        return (f"{entry.feature}: transformers builds the '{entry.closest}' model from it, "
                f"so relabelling the file as '{entry.closest}' gives the same figures")
    if entry.identical:
        return (f"{entry.feature}: transformers' '{entry.closest}' model has the same "
                f"parameters and FLOPs for the same keys, so relabelling the file as "
                f"'{entry.closest}' gives the same figures")
    if not entry.closest:
        return f"{entry.feature}, not read yet"
    return (f"{entry.feature}, not read yet; the closest supported family is "
            f"'{entry.closest}' ({entry.differs}), and relabelling the file as it would give "
            "different figures")
