"""The claims (config/claims.yaml): the paper's statements judged on fresh seeds, each an
effect with an interval. Here are their tables, verdicts, page, TeX and figure; the
effects and intervals themselves are analysis.claims and effects/, shared with the
judges of the studies that came after."""
