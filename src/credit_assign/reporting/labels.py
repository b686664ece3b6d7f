"""Every display name the pages and the paper give a key, once: its Markdown form
(``md``) and its TeX form (``tex``), or where a figure draws it, its forms there
(``figure``, ...). Tables and findings keep the keys (a metric's column name, a
dataset's config name, a seed set's name in config/claims.yaml, a recipe's kind); the
names are applied when a page or a figure is drawn. The figures' own words (titles, keys,
annotations) are data too: a YAML file beside each figure's module (:func:`figure_text`)."""

from __future__ import annotations

from importlib import resources

import yaml

DATASETS = {
    "cifar10": {"md": "CIFAR-10", "tex": "CIFAR-10"},
    "digits": {"md": "the digits data (a quick run)",
               "tex": "the $8 \\times 8$ digits of scikit-learn"},
}
# ``figure``: the axis label of every figure that draws the metric (figures.style.LABELS)
METRICS = {
    "test_acc": {"md": "test accuracy", "tex": "test acc.", "figure": "test accuracy"},
    "h_L_norm_median": {"md": "median ‖h_L‖", "tex": "$\\|h_L\\|$",
                        "figure": r"median $\|h_L\|_2$"},
    "deep_cosine": {"md": "deep cosine", "tex": "deep cos",
                    "figure": r"deep cosine to $\partial \mathrm{CE}/\partial h_l$"},
    "cosine": {"md": "cosine", "tex": "cos",
               "figure": r"cosine to $\partial \mathrm{CE}/\partial h_l$"},
    "trained_b_deep_cosine": {"md": "deep cosine, trained B", "tex": "deep cos, trained $B$"},
    "fresh_b_deep_cosine_mean": {"md": "deep cosine, fresh-B null",
                                 "tex": "deep cos, fresh $B$"},
}
SEED_SETS = {  # config/claims.yaml's seed sets
    "fresh": {"md": "the fresh seeds", "tex": "fresh"},
    "study": {"md": "the study's seeds", "tex": "study"},
    # new when the claims were committed; the EP question, later, calls them seen
    "ep_fresh": {"md": "the EP probe's own seeds (new when the claims were committed)",
                 "tex": "EP's own"},
}

# A recipe's kind (analysis.study.recipe_kind; config/variants.yaml), as the gap
# maps name a column group: in full over fig_variants' columns (``figure``), short over
# the measured maps' narrow ones (``figure_short``), and over a column of the paper's
# figure, which shows the best recipe of each kind but the unlabelled (``figure_key``);
# what a labelled kind is, as the measured maps' key says it beside its short name
# (``figure_what``).
RECIPE_KINDS = {
    "stated": {"figure": "the stated recipe", "figure_short": "stated",
               "figure_key": "stated recipe", "figure_what": "the stated recipe"},
    "open": {"figure": "fills a detail the paper leaves open (best first)",
             "figure_short": "open", "figure_key": "best open variant",
             "figure_what": "fills a detail the paper leaves open"},
    "departs": {"figure": "departs from what the paper states (best first)",
                "figure_short": "departs", "figure_key": "best departing variant",
                "figure_what": "departs from what it states"},
    "unlabelled": {"figure": "unlabelled variants (no kind given)",
                   "figure_short": "unlabelled"},
}


def names(table: dict[str, dict[str, str]], form: str) -> dict[str, str]:
    """key → its name in ``form`` ("md" or "tex"; a figure's form, e.g. "figure")."""
    return {key: forms[form] for key, forms in table.items()}


def figure_text(module: str) -> dict[str, str]:
    """A figure module's words, from the YAML file of its name beside it
    (``figure_text(__name__)`` in studies/claims/fig_claims.py reads fig_claims.yaml beside it;
    through importlib.resources, so from a checkout or a wheel alike): name → text, a
    ``{name}`` in a text for what the figure fills in when drawn (str.format). The file is
    part of that module's code only (planning.code.data_read): editing one figure's words
    redraws that figure alone."""
    package, _, stem = module.rpartition(".")
    text = resources.files(package).joinpath(f"{stem}.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)
