"""Figures laid out for people and programs: JSON documents (and their schema) and neutral
tables of text. Computes nothing new; renders nothing."""

SCHEMA_VERSION = 1  # every document's schema_version (views/schema.py describes the documents)
