"""What both benchmarks write with their figures: the commit measured, and their section of docs/BENCHMARKS.md."""
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def code_version() -> str:
    """The commit the figures belong to, and whether app code had uncommitted changes (read-only git)."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "exams", "accounts", "config", "templates"],
                               cwd=ROOT, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{commit}" + (" with uncommitted changes to the app" if dirty else "") if commit else "unknown"


def update_doc(doc: Path, section: str, marker: str) -> bool:
    if not doc.exists():
        return False
    text = doc.read_text()
    begin, end = f"<!-- bench:{marker}:begin -->", f"<!-- bench:{marker}:end -->"
    if begin not in text or end not in text:
        return False
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    doc.write_text(f"{head}{begin}\n{section}{end}{tail}")
    return True


def write_results(results_dir: Path, doc: Path, name: str, results: dict, section: str) -> None:
    """bench/results/<name>.json and .md, and the section of docs/BENCHMARKS.md; the section is printed."""
    results_dir.mkdir(parents=True, exist_ok=True)
    (results_dir / f"{name}.json").write_text(json.dumps(results, indent=1, default=str))
    (results_dir / f"{name}.md").write_text(section)
    placed = update_doc(doc, section, name)
    print(section)
    print(f"written: {results_dir / f'{name}.md'}" + (f" and {doc}" if placed else ""))
