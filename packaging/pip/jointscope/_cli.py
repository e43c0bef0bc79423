import os
import sys

from jointscope import BINARY


def main():
    if not os.access(BINARY, os.X_OK):
        sys.exit(f"jointscope-cli: the binary {BINARY} is missing from this install")
    os.execv(BINARY, [BINARY] + sys.argv[1:])
