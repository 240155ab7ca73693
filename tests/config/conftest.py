"""Fixtures of the config tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _fresh_redaction_caches() -> Iterator[None]:
    """Each test computes a secret's forms and the redactor's patterns anew: a value cached
    by an earlier test (or by mutation testing's first run) would hide what this one does."""
    from mcpctl.config.redaction import _matchers, secret_forms

    secret_forms.cache_clear()
    _matchers.cache_clear()
    yield
