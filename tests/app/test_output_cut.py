"""Too much printed output is cut, not fatal (issue 21 §2): the run finishes, the answer keeps the first part
and the last lines, and says what was cut in ``truncated_reason``."""
from __future__ import annotations

PRINTER = "import torch\nx = torch.tensor(2.0)\nfor i in range(9000):\n    print('line', i, 'of a long training log')\nprint('done', x * 3)\n"


def test_a_long_printer_finishes_and_the_answer_says_its_output_was_cut(run, settings):
    d = run(PRINTER)
    assert d["error"] is None
    out = d["stdout"]
    assert out.startswith("line 0 of a long training log\nline 1 of a long training log\n")
    assert out.rstrip().endswith("done tensor(6.)")  # the program ran to its last line
    assert "lines cut" in out and len(out.encode()) <= settings.max_output_bytes + 200
    assert d["truncated"] is True
    assert "max_output_bytes" in d["truncated_reason"]


def test_a_short_printer_is_not_marked_truncated(run):
    d = run("for i in range(3):\n    print(i)\n")
    assert d["stdout"] == "0\n1\n2\n" and d["truncated"] is False and d["truncated_reason"] is None
