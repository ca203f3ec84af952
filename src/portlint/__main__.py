import sys

from portlint.quick import main

sys.exit(main())
