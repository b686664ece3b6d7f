"""Reporting: summary tables, the reproduction table and notes, the paper, the figures.
Reads result files and tables only: never torch or the science."""
