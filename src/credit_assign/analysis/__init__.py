"""Findings as data: result files → summary tables → the comparison with the paper, the
variant study's ranking, the claims' effects and every finding the pages word. Nothing
here writes a word a reader sees; the pages and figures (each study's room,
credit_assign.studies, on credit_assign.reporting and credit_assign.figures.style)
render these findings through templates and label tables.
"""
