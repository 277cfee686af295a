"""python -m dbio: the command line (cli.py)."""

from dbio.cli import main

main()
