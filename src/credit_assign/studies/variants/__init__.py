"""The recipe-variant study (config/variants.yaml): each recipe's numbers against the
paper's, as a gap map. Here are its page and its three figures (the gap map, its key
recipes for the paper, the measured maps); its ranking, goal and verdicts
(analysis.study, analysis.gap_table, analysis/verdicts/) stay shared, as the paper and
the reproduction notes read them too."""
