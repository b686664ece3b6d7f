"""The science: the model, the learning rules, the diagnostics, training and measurement
(torch)."""
