#!/usr/bin/env python3
"""Django's command-line utility, which also installs the project on first use.

`python3 manage.py up` starts the whole service; `python3 manage.py check_all`
runs the linters, type checks and the test suite (see README.md).
"""

import os
import sys


def main() -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from config.bootstrap import ensure_venv

    ensure_venv()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from config.cli import run_django

    run_django(sys.argv)


if __name__ == "__main__":
    main()
