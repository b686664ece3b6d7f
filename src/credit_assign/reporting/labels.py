"""Every display name the pages and the paper give a key, once: its Markdown form
(``md``) and its TeX form (``tex``). Tables and findings keep the keys (a metric's
column name, a dataset's config name, a seed set's name in config/claims.yaml); the
names are applied when a page is written."""

from __future__ import annotations

DATASETS = {
    "cifar10": {"md": "CIFAR-10", "tex": "CIFAR-10"},
    "digits": {"md": "the digits data (a quick run)",
               "tex": "the $8 \\times 8$ digits of scikit-learn"},
}
METRICS = {
    "test_acc": {"md": "test accuracy", "tex": "test acc."},
    "h_L_norm_median": {"md": "median ‖h_L‖", "tex": "$\\|h_L\\|$"},
    "deep_cosine": {"md": "deep cosine", "tex": "deep cos"},
    "cosine": {"md": "cosine", "tex": "cos"},
    "trained_b_deep_cosine": {"md": "deep cosine, trained B", "tex": "deep cos, trained $B$"},
    "fresh_b_deep_cosine_mean": {"md": "deep cosine, fresh-B null",
                                 "tex": "deep cos, fresh $B$"},
}
SEED_SETS = {  # config/claims.yaml's seed sets
    "fresh": {"md": "the fresh seeds", "tex": "fresh"},
    "study": {"md": "the study's seeds", "tex": "study"},
    "ep_fresh": {"md": "the EP probe's fresh seeds", "tex": "EP fresh"},
}


def names(table: dict[str, dict[str, str]], form: str) -> dict[str, str]:
    """key → its name in ``form`` ("md" or "tex")."""
    return {key: forms[form] for key, forms in table.items()}
