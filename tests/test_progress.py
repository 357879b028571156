"""The one progress printer: a line at most every second, the last one always, nothing when quiet."""

from __future__ import annotations

from arena.progress import Progress


def test_steps_print_at_most_a_line_a_second_and_always_the_last(capsys):
    p = Progress(5, "figures", every=3600.0)
    for k in range(5):
        p.step(f"figure{k}")
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0].startswith("[arena] figures: 1/5 (20%) 0:00:00 elapsed, ~")
    assert lines[1].startswith("[arena] figures: 5/5 (100%)") and lines[1].endswith(" | figure4")
    assert "left" not in lines[1]


def test_a_quiet_printer_prints_nothing(capsys):
    p = Progress(2, "figures", quiet=True)
    p.step()
    p.step()
    assert capsys.readouterr().out == ""


def test_a_caller_that_counts_elsewhere_gives_the_count_and_the_time_left():
    p = Progress(396, started=100.0)
    assert p.line(392, left=2.4, now=133.0) == "392/396 (99%) 0:00:33 elapsed, ~0:00:02 left"
    assert p.line(3, now=101.0) == "3/396 (1%) 0:00:01 elapsed"
