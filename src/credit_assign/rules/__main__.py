"""python -m credit_assign.rules: the registered rules' options, as config/README.md
lists them."""

from credit_assign.rules import options_table

print(options_table())
