"""The commands people type from README.md and docs/*.md, run as written, so the pages cannot drift.

README command 1 (the first fenced block's first line) runs first, in a folder holding a copy of samples/:
its `swift run bookpipe` calls become the binary under test (the build is what this suite is given) and the
install step is left out. Then every fenced ```sh block that follows a `<!-- tested: NAME -->` line runs in
that folder, line by line and in order:
- a line starting with `#` after a command shows that command's output: it must appear in what the command
  printed (stdout and stderr together), each `…` standing for any text;
- a command's own comment (after two spaces and `#`) may say `(exit N)`: the status it must end with; else 0;
- `swift build …` lines are left out (the binary is given, on PATH as `bookpipe`); `export NAME=VALUE` sets a
  variable for the lines after it.
A block marked `<!-- tested: NAME with postgres -->` runs against a new database of the test cluster
(`BOOKPIPE_TEST_POSTGRES`, which scripts/run-tests.sh starts): its `sudo …` lines are the server's set-up, which the
cluster stands for, and the example URL `postgres://bookpipe@db.example.org/books` names that database.
"""

import os
import re
import shutil
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PAGES = ["README.md"] + sorted(os.path.join("docs", name) for name in os.listdir(os.path.join(ROOT, "docs"))
                              if name.endswith(".md"))
MARKER = re.compile(r"^<!-- tested: ([a-z0-9-]+)( with postgres)? -->$")
EXAMPLE_URL = "postgres://bookpipe@db.example.org/books"
INLINE_COMMENT = re.compile(r"\s{2,}#\s?(.*)$")


def marked_blocks():
    """(page, name, first line number, [lines]) of every block marked as tested."""
    blocks = []
    for page in PAGES:
        lines = open(os.path.join(ROOT, page), encoding="utf-8").read().split("\n")
        for number, line in enumerate(lines):
            marker = MARKER.match(line.strip())
            if not marker:
                continue
            assert lines[number + 1].strip() == "```sh", f"{page}:{number + 1}: a tested marker must stand right above a ```sh block"
            body = []
            for inner in lines[number + 2:]:
                if inner.strip() == "```":
                    break
                body.append(inner)
            blocks.append((page, marker.group(1) + (" with postgres" if marker.group(2) else ""), number + 3, body))
    return blocks


def steps(page, first_line, lines):
    """Commands with their expected status and output lines."""
    result = []
    for offset, line in enumerate(lines):
        where = f"{page}:{first_line + offset}"
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            assert result, f"{where}: output shown before any command"
            result[-1]["output"].append(stripped.lstrip("#").strip())
            continue
        comment = INLINE_COMMENT.search(line)
        command = line[:comment.start()] if comment else line
        status = re.search(r"\(exit (\d+)\)", comment.group(1)) if comment else None
        result.append({"where": where, "command": command.strip(), "status": int(status.group(1)) if status else 0,
                       "output": []})
    return result


def shows(printed, expected):
    """True when `expected`, with `…` for any text, appears in `printed`."""
    position = 0
    for fragment in (part.strip() for part in expected.split("…")):
        if not fragment:
            continue
        found = printed.find(fragment, position)
        if found < 0:
            return False
        position = found + len(fragment)
    return True


def run(step, folder, environment, database_url=None):
    command = step["command"]
    if command.startswith("swift build") or (database_url and command.startswith("sudo ")):
        return
    if database_url:
        command = command.replace(EXAMPLE_URL, database_url)
    exported = re.fullmatch(r"export ([A-Z_]+)=(\S+)", command)
    if exported:
        environment[exported.group(1)] = exported.group(2)
        return
    completed = subprocess.run(["bash", "-c", command], cwd=folder, env=environment, capture_output=True, text=True,
                               stdin=subprocess.DEVNULL,
                               timeout=300)
    printed = completed.stdout + completed.stderr
    assert completed.returncode == step["status"], (
        f"{step['where']}: `{command}` exited {completed.returncode}, the page says {step['status']}:\n{printed}")
    for expected in step["output"]:
        assert shows(printed, expected), f"{step['where']}: `{command}` did not print `{expected}`:\n{printed}"


def readme_command_one():
    """README command 1 without its install step, with `bookpipe` for `swift run bookpipe`."""
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    first = re.search(r"```\n(.*?)\n", text).group(1)
    parts = [part.strip() for part in first.split("&&")]
    assert parts[0] == "bash scripts/install-system-packages.sh", first
    assert all(part.startswith("swift run bookpipe ") for part in parts[1:]), first
    return " && ".join("bookpipe " + part[len("swift run bookpipe "):] for part in parts[1:])


@pytest.fixture()
def folder(tmp_path):
    shutil.copytree(os.path.join(ROOT, "samples"), tmp_path / "samples",
                    ignore=shutil.ignore_patterns("*.sqlite", "__pycache__"))
    environment = {key: value for key, value in os.environ.items() if not key.startswith("BOOKPIPE_")}
    environment["PATH"] = os.path.dirname(os.environ["BOOKPIPE_BIN"]) + os.pathsep + environment["PATH"]
    completed = subprocess.run(["bash", "-c", readme_command_one()], cwd=tmp_path, env=environment,
                               capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return tmp_path, environment


def test_readme_command_one_matches_the_samples_as_the_readme_says(folder):
    path, environment = folder
    completed = subprocess.run(["bookpipe", "stats", "--library", "samples-library.sqlite"], cwd=path, env=environment,
                               capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    assert "samples-library.sqlite: 70 records" in completed.stdout
    assert "enriched 67" in completed.stdout and "notFound 3" in completed.stdout, completed.stdout


def test_every_page_has_its_walkthroughs_marked():
    names = {(page, name) for page, name, _, _ in marked_blocks()}
    assert ("README.md", "quick-start") in names, names
    assert len(names) == len(marked_blocks()), "two tested blocks share a name"


@pytest.mark.parametrize("page,name,first_line,lines", marked_blocks(), ids=lambda value: value if isinstance(value, str) else "")
def test_a_walkthrough_runs_as_written(folder, page, name, first_line, lines):
    path, environment = folder
    database_url = new_database(name) if name.endswith(" with postgres") else None
    for step in steps(page, first_line, lines):
        run(step, path, environment, database_url)


def new_database(name):
    """A new, empty database of the test cluster, as a postgres:// URL over its unix socket."""
    conninfo = os.environ.get("BOOKPIPE_TEST_POSTGRES")
    folder = os.environ.get("BOOKPIPE_TEST_POSTGRES_DIR")
    assert conninfo and folder, ("the walkthrough " + name + " needs a PostgreSQL server: run the tests with "
                                 "`bash scripts/run-tests.sh` (it starts a throwaway cluster)")
    database = "readme_" + re.sub(r"[^a-z0-9]", "_", name) + "_" + str(os.getpid())
    subprocess.run(["psql", conninfo, "-q", "-c", f"DROP DATABASE IF EXISTS {database}", "-c", f"CREATE DATABASE {database}"],
                   check=True, capture_output=True, timeout=60)
    return f"postgresql://bookpipe@/{database}?host={folder}"
