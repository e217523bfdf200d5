"""Griffe extension: document class attributes that sekai builds with descriptor factories.

The native finance envs declare their parameters and state with calls such as
``mu = param("Annual drift(s) of the built-in GBM (shared).")`` or
``mid = state("_mid", "Mid price of every sub-env.")``. The text is the descriptor's
runtime ``__doc__`` (what ``help()`` shows); griffe reads source statically and would see
attributes without docstrings, which the API reference hides. This extension gives each such
attribute the call's last string literal as its docstring, and says which ones are read-only.
"""

from __future__ import annotations

import ast
from typing import Any

from griffe import Attribute, Docstring, Extension

# factory name -> (a note appended to the docstring, the labels shown)
FACTORIES = {
    "param": (
        "Settable with `set_attr`, one value for every sub-env.",
        {"property", "writable"},
    ),
    "read_only": ("Read-only.", {"property"}),
    "state": ("A copy, one row per sub-env.", {"property"}),
}


class DescriptorDocs(Extension):
    """Docstrings for ``name = param(...)``, ``read_only(...)`` and ``state(...)`` attributes."""

    def on_attribute_instance(self, *, node: Any, attr: Attribute, **kwargs: Any) -> None:
        if attr.docstring is not None or not isinstance(node, (ast.Assign, ast.AnnAssign)):
            return
        call = node.value
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
            return
        factory = FACTORIES.get(call.func.id)
        texts = [
            arg.value
            for arg in (*call.args, *(keyword.value for keyword in call.keywords))
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
        ]
        if factory is None or not texts:
            return
        note, labels = factory
        attr.docstring = Docstring(f"{texts[-1]} {note}", parent=attr)
        attr.labels = set(labels)
        attr.value = None  # the factory call is how it is built, not what it holds
