"""Sphinx configuration: ``make docs`` builds HTML into docs/_build/html with -W.

The API pages are autodoc of the installed package (this checkout); the configuration
reference and the error tables are generated from the code by ``_ext/config_reference.py``
at build time; code samples are ``literalinclude`` of ``examples/``, which
``tests/integration/test_examples.py`` runs against a real broker.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE / "_ext"))

import aiokafka  # noqa: E402

project = "aiokafka"
author = "the aiokafka authors"
copyright = "the aiokafka authors, Apache License 2.0"
release = aiokafka.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "myst_parser",
    "config_reference",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]

# Markdown pages (DESIGN.md, the migration guide, ...) link to headings by anchor.
myst_heading_anchors = 3

# Google-style docstrings (the project's convention).
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
# "Attributes:" sections as fields of the class, not separate entries: NamedTuple
# fields are documented by autodoc too, and two entries would be duplicates.
napoleon_use_ivar = True
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "signature"
# Type names only imported under TYPE_CHECKING stay strings instead of failing.
autodoc_type_aliases: dict[str, str] = {}

html_theme = "alabaster"
html_title = f"aiokafka {release}"
html_static_path: list[str] = []
html_theme_options = {
    "description": "asyncio client for Apache Kafka",
    "fixed_sidebar": True,
}
