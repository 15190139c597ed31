"""Telemetry files read line by line, a line longer than the bound never held whole."""

from __future__ import annotations

from telemetry import RAW_SHOWN_BYTES, CutMessage
from telemetry.files import numbered_lines

BOUND = 100


def test_a_line_longer_than_the_bound_comes_cut_with_its_length_and_the_next_lines_are_read(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n' + b"x" * 5000 + b"\r\n\n" + b'{"b": 2}\n')
    lines = list(numbered_lines(path, BOUND))
    assert lines == [("t.jsonl:1", b'{"a": 1}'), ("t.jsonl:2", CutMessage(b"x" * RAW_SHOWN_BYTES, 5000)),
                     ("t.jsonl:4", b'{"b": 2}')]


def test_a_line_of_exactly_the_bound_comes_whole_whatever_its_line_ending(tmp_path):
    path = tmp_path / "t.jsonl"
    line = b"y" * BOUND
    path.write_bytes(line + b"\r\n" + line + b"\n" + line)
    assert [raw for _, raw in numbered_lines(path, BOUND)] == [line, line, line]


def test_a_file_of_nul_bytes_without_a_newline_is_one_cut_line(tmp_path):
    path = tmp_path / "zeros.jsonl"
    size = 3 * 1024 * 1024 + 7  # more than one chunk of the skip
    path.write_bytes(bytes(size))
    assert list(numbered_lines(path, 65536)) == [("zeros.jsonl:1", CutMessage(bytes(RAW_SHOWN_BYTES), size))]


def test_a_bound_below_what_a_rejection_shows_still_shows_the_head_without_its_line_ending(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"z" * 300 + b"\r\n" + b'{"b": 2}\n')
    assert list(numbered_lines(path, BOUND)) == [("t.jsonl:1", CutMessage(b"z" * 300, 300)),
                                                 ("t.jsonl:2", b'{"b": 2}')]
