"""Profiling bundled PyTorch models: the models (``zoo``, torch), the analytic model (torch), and
the torch-free side the CLI and TUI import — catalog, presets, commands, runner, runs, doctor."""
