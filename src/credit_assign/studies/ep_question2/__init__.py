"""EP's second question (issue #55; config/claims_ep2.yaml, pre-registered): block 0's
cosine to the fixed-point gradient with the estimator the precision study chose, on
fresh seeds."""
