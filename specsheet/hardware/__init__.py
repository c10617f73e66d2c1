"""Accelerators: what a GPU (or TPU) holds and how fast it computes and moves bytes.

catalog.py holds the Accelerator record and its validation; the built-in entries are the YAML
files in accelerators/, compiled into accelerator_data.py by scripts/build_hardware.py so that a
command reads them without a YAML parser. Reading a user's own file belongs to sources/.
"""
