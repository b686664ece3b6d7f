"""Config keys that are gone: for each, the message that says what to write now (the
planning's checks raise the first before the schema, whose refusal would not say it).

- ``figures.penalty_lambda`` (a second key kept in step with the sweep): the sweep marks
  figure 4's λ now, ``sweep.dfa: [0, …, {fig4: λ}]``;
- ``rule.<method>`` (a learning rule's options), at the top or in a variant's overrides:
  ``methods.<method>`` now, one word for the method as in ``sweep.<method>``.
"""

from __future__ import annotations

from typing import Any


def gone(config: dict[str, Any], figure_mark: str) -> list[str]:
    """What ``config`` still sets of the keys that are gone, each as the message that
    says what to write instead (``figure_mark``: the sweep's mark of figure 4's λ)."""
    out = []
    figures = config.get("figures")
    if isinstance(figures, dict) and "penalty_lambda" in figures:
        lam = _yaml_number(figures["penalty_lambda"])
        out.append(
            f"figures.penalty_lambda = {lam}: this key is gone; figure 4's λ is marked in "
            f"the sweep. Remove the `figures` section and write that λ in sweep.dfa as "
            f"{{{figure_mark}: {lam}}} among its λ, e.g. sweep: {{dfa: [0, …, "
            f"{{{figure_mark}: {lam}}}]}} (config/README.md)")
    variants = config.get("variants")
    places = [("", config)] + [
        (f"variants.{name}.overrides.", spec.get("overrides"))
        for name, spec in (variants.items() if isinstance(variants, dict) else ())
        if isinstance(spec, dict)]
    for where, block in places:
        if isinstance(block, dict) and "rule" in block:
            out.append(
                f"{where}rule: this key is gone; each learning rule's options are in "
                f"{where}methods.<method> now (the method's name as in sweep.<method>). "
                f"Rename `rule:` to `methods:` (config/README.md)")
    return out


def _yaml_number(value) -> str:
    """A number as YAML 1.1 reads it back as one (1e-05 would be a string: 1.0e-05)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return repr(value)
    text = repr(value)
    mantissa, e, exponent = text.partition("e")
    if e and "." not in mantissa:
        text = f"{mantissa}.0e{exponent}"
    return text
