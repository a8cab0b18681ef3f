"""arch-debate: a folder of round files, read and judged by the runner."""
