"""The penalty rescue (config/config.yaml): DFA's penalty sweep against BP and FA, the
fresh-B nulls and the alignment probes, compared with the paper's numbers. Here are its
figure 4, the alignment probes' figure and the reproduction page; its numbers
(analysis.aggregate, analysis.comparison) and the reproduction notes stay shared, as
the paper and the variant study read them too."""
