"""``python -m roofscope.cli``: the same as ``roofscope`` (tests and benchmarks run it so)."""

from roofscope.cli import main

raise SystemExit(main())
