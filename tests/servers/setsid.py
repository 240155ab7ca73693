"""``setsid CMD ARGS...`` where there is no such program (macOS): CMD in a session of its own."""

import os
import sys

os.setsid()
os.execvp(sys.argv[1], sys.argv[1:])  # noqa: S606 -- the command as given, as setsid(1) runs it
