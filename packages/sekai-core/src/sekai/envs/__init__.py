"""The joint package of sekai environments; env distributions add subpackages here."""

from __future__ import annotations

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)
