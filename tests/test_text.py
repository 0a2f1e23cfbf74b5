"""The small shared helpers, each written once: times, durations, lists, one-line reasons (core/text), the
curator's trailing mark lines (core/compose), where a vault's state lives (store/state)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memory_curator.core.compose import strip_drop_mark, strip_review_mark
from memory_curator.core.marks import DROP_MARK, REVIEW_MARK, strip_trailing_marks
from memory_curator.core.text import ERROR_CHARS, describe, duration_seconds, iso, one_line, parse_time, split_list
from memory_curator.store.state import state_folder, vault_id

UTC = dt.UTC


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-11-30T12:00:00Z", dt.datetime(2026, 11, 30, 12, tzinfo=UTC)),
        ("2026-11-30T12:00:00+02:00", dt.datetime(2026, 11, 30, 10, tzinfo=UTC)),
        ("2026-11-30T12:00:00", dt.datetime(2026, 11, 30, 12, tzinfo=UTC)),  # no zone: UTC
        ("2026-11-30", dt.datetime(2026, 11, 30, tzinfo=UTC)),
        ("  2026-11-30T12:00Z\n", dt.datetime(2026, 11, 30, 12, tzinfo=UTC)),
        (dt.datetime(2026, 11, 30, 12), dt.datetime(2026, 11, 30, 12, tzinfo=UTC)),
        (dt.date(2026, 11, 30), dt.datetime(2026, 11, 30, tzinfo=UTC)),
    ],
)
def test_parse_time_reads_iso_text_datetimes_and_dates_as_aware_times(value: object, expected: dt.datetime) -> None:
    moment = parse_time(value)
    assert moment == expected
    assert moment is not None and moment.tzinfo is not None


def test_parse_time_keeps_a_given_zone() -> None:
    zone = dt.timezone(dt.timedelta(hours=-5))
    moment = parse_time(dt.datetime(2026, 11, 30, 7, tzinfo=zone))
    assert moment is not None and moment.tzinfo is zone


@pytest.mark.parametrize("value", [None, "", "   ", "yesterday", "2026-13-01", "30m", 1_700_000_000, ["2026-11-30"]])
def test_parse_time_is_none_for_what_is_not_a_time(value: object) -> None:
    assert parse_time(value) is None


def test_iso_is_utc_with_a_z() -> None:
    zone = dt.timezone(dt.timedelta(hours=2))
    assert iso(dt.datetime(2026, 11, 30, 14, 0, 5, 999, tzinfo=zone)) == "2026-11-30T12:00:05Z"
    assert parse_time(iso(dt.datetime(2026, 11, 30, 12, tzinfo=UTC))) == dt.datetime(2026, 11, 30, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30s", 30),
        ("15m", 900),
        ("15min", 900),
        ("15 MIN", 900),
        (" 12h ", 43200),
        ("7d", 604800),
        ("2w", 1209600),
        ("0m", 0),
    ],
)
def test_duration_seconds(text: str, seconds: int) -> None:
    assert duration_seconds(text) == seconds


@pytest.mark.parametrize("text", ["", "m", "15", "15x", "1.5h", "-5m", "15m ago", "15mm", "h15"])
def test_duration_seconds_is_none_for_what_is_not_a_duration(text: str) -> None:
    assert duration_seconds(text) is None


def test_a_bare_number_counts_in_the_default_unit() -> None:
    assert duration_seconds("15", default_unit="m") == 900
    assert duration_seconds("2", default_unit="h") == 7200
    assert duration_seconds("15s", default_unit="m") == 15  # a written unit wins


@pytest.mark.parametrize(
    ("value", "items"),
    [
        ("a, b c", ["a", "b", "c"]),
        ("a,b,,c", ["a", "b", "c"]),
        ("  ", []),
        ("", []),
        ("#x", ["#x"]),
        (42, ["42"]),
    ],
)
def test_split_list(value: object, items: list[str]) -> None:
    assert split_list(value) == items


def test_strip_trailing_marks_removes_only_the_curators_lines_at_the_very_end() -> None:
    review = f"{REVIEW_MARK}unsure (2026-11-30T12:00:00Z)\n"
    drop = f"{DROP_MARK}a duplicate (2026-11-30T12:00:00Z)\n"
    assert strip_trailing_marks(f"body\n\n{review}") == "body\n"
    assert strip_trailing_marks(f"body\n\n{drop}\n{review}") == "body\n"
    assert strip_review_mark(f"body\n\n{review}") == "body\n"
    assert strip_review_mark(f"body\n\n{drop}") == f"body\n\n{drop}"  # not its mark: unchanged
    assert strip_drop_mark(f"body\n\n{drop}") == "body\n"
    assert strip_trailing_marks(f"{review}body\n") == f"{review}body\n"  # not at the end
    assert strip_trailing_marks(f"body\n{review}\n") == f"body\n{review}\n"  # a blank line after it
    assert strip_trailing_marks("body\n\n") == "body\n\n"  # nothing stripped: the text itself


def test_state_folder_explicit_then_environment_then_per_vault(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    home = tmp_path / "state-home"
    assert state_folder(vault, tmp_path / "x", {"MEMORY_CURATOR_STATE": str(tmp_path / "y")}, home) == tmp_path / "x"
    assert state_folder(vault, None, {"MEMORY_CURATOR_STATE": str(tmp_path / "y")}, home) == tmp_path / "y"
    assert state_folder(vault, "~/s", {}, home) == Path.home() / "s"
    assert state_folder(vault, None, {}, home) == home / "vaults" / vault_id(vault)
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()  # nothing is created


def test_one_line_folds_a_text_and_escapes_an_error() -> None:
    assert one_line("  too\n  long\tago \x1b ") == "too long ago \x1b"  # a person's reason: folded, whole
    assert one_line("x" * 500) == "x" * 500
    assert one_line("abcdef", 4) == "abc…"
    assert one_line(ValueError("bad\nname \x1b[31m")) == "ValueError: bad\\nname \\x1b[31m"
    cut = one_line(ValueError("y" * 1000))
    assert len(cut) == ERROR_CHARS and cut.endswith("…")


def test_describe_says_where_the_candidate_is() -> None:
    assert describe(OSError(28, "No space left on device")) == "No space left on device (OSError); left in the inbox"
    gone = describe(RuntimeError("boom"), still_there=False)
    assert gone == "boom after the inbox file was removed; the next sweep checks its destination is durable"
