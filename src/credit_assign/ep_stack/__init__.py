"""The EP stack probe (docs/method.md, "EP stack probe"): does equilibrium propagation's
gradient reach the bottom of a spring-coupled stack of transformer blocks?

* :mod:`.dynamics` — the stack as one force field, relaxation, BPTT (the reference),
  EP with two nudged phases and the asymmetry correction, hindsight selection;
* :mod:`.corpus` — the character corpora (Tiny Shakespeare, Python's own docs);
* :mod:`.probe` — the pipeline job: pretrain by BPTT, then EP against BPTT per group.
"""
