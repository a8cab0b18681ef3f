"""One module per verb. Each takes plain values and returns the JSON payload; none knows click."""
