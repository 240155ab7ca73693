"""Secrets and sign-in: the OS keyring (the only place mcpctl imports ``keyring``) and OAuth.

    from mcpctl.auth import SecretStore, keyring_source
    from mcpctl.auth import SignIn, sign_in, sign_out, load_record, token_status  # OAuth

* :mod:`~mcpctl.auth.secrets` -- values of ``${VAR}`` placeholders, and raw keyring items;
* :mod:`~mcpctl.auth.records` and :mod:`~mcpctl.auth.oauthtokens` -- OAuth sign-ins in the keyring
  (item ``oauth:SERVER``), and the SDK's ``TokenStorage`` over them;
* :mod:`~mcpctl.auth.oauth` -- the SDK's OAuth providers, restoring what they forget between
  processes; :mod:`~mcpctl.auth.connecting` -- what connecting commands use (never a browser);
* :mod:`~mcpctl.auth.signin` and :mod:`~mcpctl.auth.revoke` -- ``mcpctl auth NAME`` and
  ``mcpctl auth logout NAME``; :mod:`~mcpctl.auth.answer` -- the browser's answer to a
  sign-in (the loopback callback, a pasted address) and the checks before its code is used.

Names are loaded on first use: importing this package does not import ``keyring``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpctl._lazy import lazy_exports

if TYPE_CHECKING:
    from mcpctl.auth.oauthtokens import OAuthRecord, TokenStore, load_record, token_status
    from mcpctl.auth.revoke import SignOut, sign_out
    from mcpctl.auth.secrets import SecretStore, keyring_source
    from mcpctl.auth.signin import SignIn, sign_in

__all__ = [
    "OAuthRecord",
    "SecretStore",
    "SignIn",
    "SignOut",
    "TokenStore",
    "keyring_source",
    "load_record",
    "sign_in",
    "sign_out",
    "token_status",
]

_LAZY = {
    "OAuthRecord": "mcpctl.auth.oauthtokens",
    "SecretStore": "mcpctl.auth.secrets",
    "SignIn": "mcpctl.auth.signin",
    "SignOut": "mcpctl.auth.revoke",
    "TokenStore": "mcpctl.auth.oauthtokens",
    "keyring_source": "mcpctl.auth.secrets",
    "load_record": "mcpctl.auth.oauthtokens",
    "sign_in": "mcpctl.auth.signin",
    "sign_out": "mcpctl.auth.revoke",
    "token_status": "mcpctl.auth.oauthtokens",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
