"""`bookpipe review` alone on a terminal: the walk driven through a pseudo-terminal.

The Swift tests drive the walk with piped answers; these run the built binary with a pseudo-terminal
as its controlling terminal (Python's `pty.fork`), so the binary sees a terminal on every standard
stream, as it does for a person. They check the prompts, that each decision is in the library while
the walk is still running (read with sqlite3 from this process), and that quitting, or Ctrl-C, mid-way
loses nothing.

    python3 -m pytest -q Tests/terminal          # after `swift build`; BOOKPIPE_BIN=… to use another binary

Uses the bundled sample scan (samples/shelf-scan: scan.json and shelf.jpg).
"""
import json
import os
import pty
import select
import shutil
import signal
import sqlite3
import subprocess
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SAMPLE = os.path.join(ROOT, "samples", "shelf-scan")
PROMPT = b"[v]erify  [e]dit  [c]hoose  [s]kip  [q]uit > "


def binary():
    return os.environ["BOOKPIPE_BIN"]  # set by Tests/conftest.py


@pytest.fixture()
def library(tmp_path):
    """The sample scan imported without enrichment: 12 detections, 3 of them queued."""
    for name in ("scan.json", "shelf.jpg"):
        shutil.copy(os.path.join(SAMPLE, name), tmp_path / name)
    result = subprocess.run([binary(), "import-scan", "scan.json", "--no-enrich", "--progress", "none",
                             "--library", "lib.sqlite"], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "3 detections need review" in result.stderr
    return tmp_path


class Terminal:
    """The binary running on a pseudo-terminal: what it wrote so far, and typing into it."""

    def __init__(self, folder, *arguments):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the pty is its controlling terminal and standard streams
            os.chdir(folder)
            os.execv(binary(), [binary(), *arguments])
        self.output = b""

    def read_until(self, expected, timeout=20):
        """Reads until `expected` has been written after everything read so far was consumed."""
        deadline = time.monotonic() + timeout
        while expected not in self.output:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"timed out waiting for {expected!r}; the terminal shows:\n{self.output.decode(errors='replace')}"
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:  # EIO: the child closed the terminal
                    chunk = b""
                assert chunk, f"the walk ended before {expected!r}:\n{self.output.decode(errors='replace')}"
                self.output += chunk
        before, _, self.output = self.output.partition(expected)
        return before + expected

    def type(self, text):
        os.write(self.fd, text.encode())

    def wait(self, timeout=20):
        """The exit status (negative: killed by that signal)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                # Drain what is left, so the caller can look at it.
                try:
                    while select.select([self.fd], [], [], 0.1)[0]:
                        chunk = os.read(self.fd, 4096)
                        if not chunk:
                            break
                        self.output += chunk
                except OSError:
                    pass
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status)
            time.sleep(0.05)
        os.kill(self.pid, signal.SIGKILL)
        raise AssertionError("the walk did not end")


def queued_ids(folder):
    """The queued ids, newest first, as `review list --json` gives them."""
    listed = subprocess.run([binary(), "review", "list", "--json", "--library", "lib.sqlite"], cwd=folder,
                            capture_output=True, text=True, check=True)
    return [json.loads(line)["id"] for line in listed.stdout.splitlines()]


def status_of(folder, record_id):
    """The stored review status of one record, read with sqlite3 while the walk may still run."""
    file_hash, row = record_id.rsplit(":", 1)
    with sqlite3.connect(os.path.join(folder, "lib.sqlite")) as db:
        found = db.execute("SELECT r.review_status FROM records r JOIN source_files f ON f.id = r.key >> 32 "
                           "WHERE f.hash = ? AND (r.key & 4294967295) = ?", (file_hash, int(row))).fetchone()
    assert found, record_id
    return found[0]


def test_walk_prompts_and_writes_each_decision_at_once(library):
    ids = queued_ids(library)
    assert len(ids) == 3
    walk = Terminal(library, "review", "--library", "lib.sqlite")
    first = walk.read_until(PROMPT)
    assert b"3 items to review" in first and b"[1/3]" in first
    assert b"title:      The Left Hand of Darkness" in first.replace(b"\r\n", b"\n")

    walk.type("v\n")
    walk.read_until(f"verified {ids[0]}".encode())
    second = walk.read_until(PROMPT)
    assert b"[2/3]" in second and b"STATION ELEVEN" in second
    # Written at once: the walk is still waiting at its prompt.
    assert status_of(library, ids[0]) == "verified"

    walk.type("x\n")
    walk.read_until(b"answer v, e, c, s or q")
    walk.read_until(PROMPT)
    walk.type("e\n")
    walk.read_until(b"title [STATION ELEVEN] > ")
    walk.type("Station Eleven\n")
    walk.read_until(b"authors, separated by ; [")
    walk.type("Emily St. John Mandel\n")
    walk.read_until(b"edited " + ids[1].encode() + b": Station Eleven \xe2\x80\x94 Emily St. John Mandel")
    third = walk.read_until(PROMPT)
    assert b"[3/3]" in third
    assert status_of(library, ids[1]) == "userEdited"

    walk.type("q\n")
    walk.read_until(b"review: 1 verified, 1 edited, 0 chosen, 0 skipped (stopped early; the rest stay in the queue)")
    assert walk.wait() == 0
    assert queued_ids(library) == [ids[2]]
    assert status_of(library, ids[2]) == "needsReview"


def test_ctrl_c_mid_way_loses_no_decision(library):
    ids = queued_ids(library)
    walk = Terminal(library, "review", "--library", "lib.sqlite")
    walk.read_until(PROMPT)
    walk.type("v\n")
    walk.read_until(PROMPT)
    walk.type("s\n")
    walk.read_until(b"[3/3]")
    walk.read_until(PROMPT)
    walk.type("\x03")  # Ctrl-C: the terminal sends SIGINT to the walk
    assert walk.wait() == -signal.SIGINT
    assert status_of(library, ids[0]) == "verified"
    assert queued_ids(library) == ids[1:]
    # The managed photo copy stays while detections of it wait for review.
    assert len([name for name in os.listdir(library / "lib.sqlite.photos") if name.endswith(".jpg")]) == 1


def test_arrow_keys_edit_the_line_and_never_reach_the_title(library):
    """Pressing Left twice, then X, inserts X two characters from the end: the escape sequences of
    the keys are never stored (they once were: `\\x1b[D\\x1b[DX` became the title)."""
    ids = queued_ids(library)
    walk = Terminal(library, "review", "--library", "lib.sqlite")
    walk.read_until(PROMPT)
    walk.type("s\n")
    walk.read_until(PROMPT)
    walk.type("e\n")
    walk.read_until(b"title [STATION ELEVEN] > ")
    # The line is edited (libedit): Left, Left, then X lands two characters from the end.
    walk.type("Station Eleven\x1b[D\x1b[DX\n")
    walk.read_until(b"authors, separated by ; [")
    walk.type("\n")  # the authors as they are
    walk.read_until(b"edited " + ids[1].encode() + b": Station ElevXen")
    walk.read_until(PROMPT)
    walk.type("q\n")
    assert walk.wait() == 0
    exported = subprocess.run([binary(), "export", "--format", "jsonl", "--library", "lib.sqlite"], cwd=library,
                              capture_output=True, text=True, check=True).stdout
    titles = [json.loads(line)["title"] for line in exported.splitlines()]
    assert "Station ElevXen" in titles, titles
    assert not any("\x1b" in (title or "") for title in titles), titles


def test_up_arrow_recalls_an_earlier_answer(library):
    """History: Up brings back the last answer line, so `s` twice is s, Enter, Up, Enter."""
    walk = Terminal(library, "review", "--library", "lib.sqlite")
    walk.read_until(PROMPT)
    walk.type("s\n")
    walk.read_until(b"[2/3]")
    walk.read_until(PROMPT)
    walk.type("\x1b[A\n")  # Up, Enter: `s` again
    walk.read_until(b"[3/3]")
    walk.read_until(PROMPT)
    walk.type("q\n")
    walk.read_until(b"review: 0 verified, 0 edited, 0 chosen, 2 skipped")
    assert walk.wait() == 0
