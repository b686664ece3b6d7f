"""python -m credit_assign.science.rules: the registered rules' options, as config/README.md
lists them."""

from credit_assign.science.rules import options_table

print(options_table())
