"""Reporting: the shared words (render and its templates, labels, TeX text) and the
paper and reproduction notes built from every study's findings. Reads result files and
tables only: never torch or the science."""
