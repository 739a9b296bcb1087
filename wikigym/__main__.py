import sys

from wikigym.cli import main

sys.exit(main())
