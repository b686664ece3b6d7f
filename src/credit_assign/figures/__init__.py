"""Figures: one module per figure; each reads tidy tables and writes PDF, PNG and SVG."""
