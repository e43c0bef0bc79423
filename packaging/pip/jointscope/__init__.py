"""The headless jointscope-cli, packaged: `jointscope-cli` on PATH runs the bundled binary."""
import os

BINARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "jointscope-cli")
