"""``python -m geodp.cli``: the ``geodp`` command."""

from geodp.cli import main

raise SystemExit(main())
