"""Findings as data: result files → summary tables → the comparison with the paper, the
variant study's ranking, the claims' effects and every finding the pages word. Nothing
here writes a word a reader sees; the pages (credit_assign.reporting) and the figures
(credit_assign.figures) render these findings through templates and label tables.
"""
