"""make conformance as a test: every GIFT, Aiken and Moodle XML case of Moodle's corpus agrees or is refused as unsupported."""
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("moodle_conformance", ROOT / "tools" / "moodle_conformance.py")
conformance = importlib.util.module_from_spec(spec)
spec.loader.exec_module(conformance)
# The corpus stays outside the repository, beside it (as CI lays it out).
CORPUS = ROOT.parent / "shared" / "corpora" / "moodle-formats"


def test_no_moodle_xml_case_differs():
    rows = list(conformance.xml_rows(CORPUS))
    assert [row for row in rows if row.status == conformance.DIFFER] == []
    statuses = {row.case: row.status for row in rows}
    # Each of Moodle's XML fixtures and cases is reported.
    assert len([case for case in statuses if case.endswith(".xml")]) == len(conformance.XML_FIXTURE_EXPECTATIONS)
    assert statuses["xml/error_invalid_grades.xml"] == conformance.AGREE  # refused, as Moodle refuses it
    assert statuses["xml/multichoice.xml"] == conformance.UNSUPPORTED  # audio and images in choices, refused by name


def test_the_report_lists_every_case(tmp_path, monkeypatch, capsys):
    report = tmp_path / "CONFORMANCE.md"
    monkeypatch.setattr(sys, "argv", ["moodle_conformance.py", "--corpus", str(CORPUS), "--report", str(report)])

    assert conformance.main() == 0

    text = report.read_text(encoding="utf-8")
    assert "## GIFT" in text and "## Aiken" in text and "## Moodle XML" in text
    assert "| `nested_categories_with_questions.xml (essay)` | unsupported-as-expected |" in text
    assert ", 0 differ," in capsys.readouterr().out
