"""``python -m leapp lint ...``"""

from __future__ import annotations

import sys

from leapp.cli import main

sys.exit(main())
