"""Renderers: rich tables for a terminal, and JSON, CSV and Markdown text."""
