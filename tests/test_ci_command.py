"""CI runs exactly the README's lint and test commands (the README tells a user what CI runs)."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _ci_commands() -> list[str]:
    """The commands .ci/run runs after installing: its lines from `ruff check` on, comments dropped."""
    lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("#")]
    start = next(i for i, ln in enumerate(lines) if ln.startswith("ruff check"))
    return lines[start:]


def _readme_command() -> list[str]:
    """The README's install block's lint-and-test line, split at `&&`, its comment dropped."""
    text = (ROOT / "README.md").read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("ruff check") and "pytest" in ln)
    return [part.strip() for part in line.split("#")[0].split("&&")]


def test_ci_runs_the_readme_lint_and_test_commands():
    assert _ci_commands() == _readme_command()


def test_the_readme_lists_what_ci_runs_among_the_test_commands():
    test_line = _ci_commands()[-1]
    assert any(ln.split("#")[0].strip() == test_line
               for ln in (ROOT / "README.md").read_text().splitlines() if "what CI runs" in ln)


def test_the_readme_installs_the_extras_ci_installs():
    """The README's `pip install -e ".[...]"` names the extras .ci/run installs, so the README's suite
    is CI's (without `examples` the notebooks are skipped)."""
    import re
    ci = re.findall(r'pip install .*-e "\.\[([a-z,]+)\]"', (ROOT / ".ci" / "run").read_text())
    readme = re.findall(r'^pip install -e "\.\[([a-z,]+)\]"', (ROOT / "README.md").read_text(), re.M)
    assert len(ci) == 1 and readme, (ci, readme)
    assert set(readme[0].split(",")) == set(ci[0].split(",")), (readme, ci)
