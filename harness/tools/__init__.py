"""Tools beside the pipeline: the benchmark and mutation testing."""
