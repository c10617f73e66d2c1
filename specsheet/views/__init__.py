"""Figures laid out for people and programs: JSON documents (and their schema) and neutral
tables of text. Computes nothing new; renders nothing."""
