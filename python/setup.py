"""The Python package's version is pacer's: compare/VERSION, the file the
Go binary embeds (pacer version). pyproject.toml has everything else; a
static version there would be a second copy to forget."""
import email.parser
import os

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))


def version():
    path = os.path.join(HERE, "..", "compare", "VERSION")
    if os.path.exists(path):
        with open(path) as f:
            return f.read().strip()
    # Built from an sdist, outside the repository: the version it recorded.
    info = os.path.join(HERE, "PKG-INFO")
    if os.path.exists(info):
        with open(info) as f:
            return email.parser.Parser().parse(f)["Version"]
    raise SystemExit("pacer-ps: no ../compare/VERSION (build from pacer's repository: pip install ./python)")


setup(version=version())
