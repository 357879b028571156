"""``python -m arena.redteam ...``: the same as ``arena-redteam ...``."""

from arena.cli import redteam_main

redteam_main()
