"""Small text helpers every layer shares, each written once: times, durations, lists, one-line
reasons (pure)."""

from __future__ import annotations

import datetime as dt


def iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
