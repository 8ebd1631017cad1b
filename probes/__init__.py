"""Templates, probe-set builders, model scorers, probing methods, metrics and reports."""
