"""`python -m tcplab`: the command-line interface."""

from tcplab.cli import main

raise SystemExit(main())
