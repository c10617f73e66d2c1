"""Turning what a user gives (a preset, a file, a folder, config.json, the Hugging Face cache,
options) into a Model. Builds models; never renders."""
