"""``python -m quarry_cli`` is ``quarry``."""

from quarry_cli.main import entrypoint

if __name__ == "__main__":
    entrypoint()
