"""``python -m arena.redteam ...``: the same as ``arena-redteam ...``."""

from arena.redteam.cli import main

main()
