"""Which machine curates a vault (pure): the rules' `curator_host` against this host's name."""

from __future__ import annotations


def host_refusal(curator_host: str | None, here: str) -> str | None:
    """The line a sweep prints instead of sweeping on a machine that is not the curator host.

    Names compare case-insensitively and by their first label ('mini' = 'Mini.local').
    """
    if not curator_host or _short_host(curator_host) == _short_host(here):
        return None
    return f"not the curator host: the rules name {curator_host!r} (curator_host), this is {here!r}; nothing done"


def _short_host(name: str) -> str:
    return name.strip().casefold().split(".")[0]
