"""Run the command line as `python -m gym_contract`."""

import sys

from gym_contract.cli import main

sys.exit(main())
