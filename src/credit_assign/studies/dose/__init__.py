"""What carries the penalty's rescue (issue #56): the λ dose-response and its arms, judged
by the plan committed before their runs (config/claims_dose.yaml)."""
