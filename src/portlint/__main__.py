import sys

from portlint.cli import main

sys.exit(main())
