"""The primer (paper/ms.tex, the primer section): the phase schematics drawn from the
rules' definitions, and the primer check's run. Here are their two figures."""
