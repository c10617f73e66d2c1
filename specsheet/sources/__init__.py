"""Turning what a user gives (a preset, a file, a folder, config.json, the Hugging Face cache,
options) into a Model. Builds models; never renders."""

# seconds to wait for the Hugging Face Hub (the whole exchange), unless --timeout says otherwise
DEFAULT_TIMEOUT = 10.0
# file names that are read as a model file, never as a preset or a repository
FILE_SUFFIXES = (".yaml", ".yml", ".json")
# the keys of a config.json (or a preset) that say its checkpoint ships quantized, read by
# hf_config/quantization.py; a mapping with neither ships unquantized
QUANTIZATION_KEYS = ("quantization_config", "compression_config")
