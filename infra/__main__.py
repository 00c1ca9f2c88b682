"""`python -m infra`: the library's command line with this repository as the default project and platform."""

import sys
from pathlib import Path

from eks_karpenter.tools import cli

REPO = Path(__file__).resolve().parent.parent
cli.DEFAULTS.update(program=REPO, platform=REPO)
sys.exit(cli.main(prog="python -m infra"))
