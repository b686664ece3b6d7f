"""EP's estimator and its precision (issue #55; exploratory, on the first EP question's seeds):
config/ep_estimator.yaml's seeds, each one result of step ep_estimator."""
