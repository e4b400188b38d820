"""Run the command line as `python -m gym_contract`."""

from gym_contract.cli import run

run()
