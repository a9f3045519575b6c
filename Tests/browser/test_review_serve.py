"""`bookpipe review serve` in a real browser: Debian's headless Chromium driven by Selenium.

Builds a library with 34 queued items from the bundled samples (the sample shelf photo with 42
detections, 33 of them unsure, and the Goodreads sample plus one row whose author disagrees with the
catalogue's book, matched against the sample catalogue, which leaves one uncertain match), starts `bookpipe review serve`, reviews every item with the keyboard
only (verify, edit, edit cancelled, choose, none, skip, undo, bulk, the catalogue search, identical
detections decided once), then stops the server and checks the library with `bookpipe export`
and `bookpipe review list --json`.

    python3 -m pytest -q Tests/browser       # after `swift build`; BOOKPIPE_BIN=… to use another binary
    BOOKPIPE_SCREENSHOT=docs/review-serve.png python3 -m pytest -q -s Tests/browser   # also the docs' picture

Needs chromium and chromium-driver (Debian) and Python's selenium
(`scripts/install-system-packages.sh --tests`). Prints the scripted reviewer's decisions per minute.
"""
import json
import os
import shutil
import signal
import subprocess
import time

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SAMPLES = os.path.join(ROOT, "samples")
HOSTILE = "<script>window.pwned=1</script>\"Quoted\" 'single' \u202edesrever"
TIMEOUT = 30  # a hang guard, far above what a decision takes


def binary():
    return os.environ["BOOKPIPE_BIN"]  # set by Tests/conftest.py


def run(folder, *arguments):
    result = subprocess.run([binary(), *arguments], cwd=folder, capture_output=True, text=True)
    assert result.returncode == 0, f"bookpipe {' '.join(arguments)}: {result.stderr}"
    return result.stdout


# (title, author, confidence): the detections added to the sample scan, reusing its spines' boxes.
EXTRA = [
    ("Undo Me", "Ann Author", 0.5),
    (HOSTILE, "Eve <b>Bold</b>", 0.45),
    ("Dune Mesiah", "Frank Herbert", 0.4),
    ("Wrong Book", "Nobody Known", 0.33),
    ("Cancel Edit", "Ann Author", 0.44),
    ("Catalog Pick", "Unknown", 0.41),
    ("STATION ELEVEN", "EMILY ST. JOHN MANDEL", 0.3),
    ("STATION ELEVEN", "EMILY ST. JOHN MANDEL", 0.35),
    ("STATION ELEVEN", "EMILY ST. JOHN MANDEL", 0.39),
    ("Bulk One", "Dim Spine", 0.05),
    ("Bulk Two", "Dim Spine", 0.08),
    ("Bulk Three", "Dim Spine", 0.1),
    ("Bulk Four", "Dim Spine", 0.12),
] + [(title, author, 0.5) for title, author in [
    ("Beloved", "Toni Morrison"), ("The Road", "Cormac McCarthy"), ("Middlemarch", "George Eliot"),
    ("Emma", "Jane Austen"), ("Persuasion", "Jane Austen"), ("Ulysses", "James Joyce"),
    ("Dracula", "Bram Stoker"), ("Frankenstein", "Mary Shelley"), ("Rebecca", "Daphne du Maurier"),
    ("Kindred", "Octavia E. Butler"), ("Solaris", "Stanislaw Lem"), ("Neuromancer", "William Gibson"),
    ("Hyperion", "Dan Simmons"), ("Foundation", "Isaac Asimov"), ("Ubik", "Philip K. Dick"),
    ("Gilead", "Marilynne Robinson"), ("Possession", "A. S. Byatt"),
]]


@pytest.fixture()
def library(tmp_path):
    """34 queued items: 33 unsure detections of the sample shelf photo, 1 uncertain match."""
    shutil.copy(os.path.join(SAMPLES, "shelf-scan", "shelf.jpg"), tmp_path / "shelf.jpg")
    with open(os.path.join(SAMPLES, "shelf-scan", "scan.json")) as sample:
        scan = json.load(sample)
    boxes = [detection["box"] for detection in scan["detections"] if "box" in detection]
    for index, (title, author, confidence) in enumerate(EXTRA):
        scan["detections"].append({"title": title, "author": author, "confidence": confidence,
                                   "box": boxes[index % len(boxes)]})
    with open(tmp_path / "scan.json", "w") as out:
        json.dump(scan, out)
    run(tmp_path, "catalog", "import", os.path.join(SAMPLES, "catalog", "openlibrary-sample.txt"), "--catalog", "cat.sqlite")
    run(tmp_path, "import", os.path.join(SAMPLES, "goodreads_library_export.csv"), "--catalog", "cat.sqlite", "--offline",
        "--progress", "none", "--library", "lib.sqlite")
    # A question worth asking: the catalogue's "Dune" matches the title exactly, but the row names
    # another author, so no match is taken without a person.
    (tmp_path / "shelf.csv").write_text("Title,Author\nDune,Nobody Known\n")
    run(tmp_path, "import", "shelf.csv", "--catalog", "cat.sqlite", "--offline", "--progress", "none", "--library", "lib.sqlite")
    run(tmp_path, "import-scan", "scan.json", "--no-enrich", "--progress", "none", "--library", "lib.sqlite")
    queued = [json.loads(line) for line in run(tmp_path, "review", "list", "--json", "--library", "lib.sqlite").splitlines()]
    assert len(queued) >= 30
    assert sum(1 for item in queued if item["kind"] == "match") >= 1
    return tmp_path


@pytest.fixture()
def server(library):
    process = subprocess.Popen([binary(), "review", "serve", "--port", "0", "--catalog", "cat.sqlite", "--library", "lib.sqlite"],
                               cwd=library, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = process.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:") and "/?token=" in url, url
    assert len(url.split("token=")[1]) == 64
    yield library, url, process
    if process.poll() is None:
        process.kill()
        process.wait()


@pytest.fixture()
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    yield driver
    driver.quit()


class Page:
    """The review page, driven by keys sent to whatever has focus, as a person types."""

    def __init__(self, driver):
        self.driver = driver
        self.decisions = 0

    def js(self, script):
        return self.driver.execute_script(script)

    def wait(self, condition, what):
        try:
            WebDriverWait(self.driver, TIMEOUT).until(lambda _: condition())
        except Exception as error:
            raise AssertionError(f"waiting for {what}; the page says: {self.status()!r}") from error

    @property
    def current(self):
        return self.js("return document.body.dataset.current || ''")

    @property
    def title(self):
        return self.js("return document.getElementById('title').value")

    @property
    def kind(self):
        return self.js("return document.body.dataset.kind || ''")

    @property
    def finished(self):
        return int(self.js("return document.body.dataset.finished || '0'"))

    def keys(self, *keys):
        ActionChains(self.driver).send_keys(*keys).perform()

    def decide(self, *keys):
        """Types keys that end in a decision or an undo and waits until the next item is shown."""
        before = self.finished
        self.keys(*keys)
        self.wait(lambda: self.finished > before, f"the decision {keys!r}")
        self.wait(lambda: self.current == "" or self.js("return document.getElementById('title').readOnly"), "the next item")
        self.decisions += 1

    def status(self):
        return self.js("return document.getElementById('status').textContent")


def test_review_thirty_items_keyboard_only(server, browser):
    folder, url, process = server
    browser.get(url)
    page = Page(browser)
    page.wait(lambda: page.current != "", "the first item")
    assert "/?token=" not in browser.current_url, "the token stays out of the address bar"
    counts = browser.find_element("id", "counts").text
    assert counts.startswith("34 to review: 33 scan detections, 1 uncertain match"), counts
    page.wait(lambda: browser.execute_script("return document.getElementById('crop').dataset.upright") == "clockwise",
              "the spine crop, turned upright")
    shot = os.environ.get("BOOKPIPE_SCREENSHOT")
    if shot:  # the picture in the docs: the full queue, the first spine upright beside its fields
        browser.save_screenshot(shot if os.path.isabs(shot) else os.path.join(ROOT, shot))

    # Titles holding markup, quotes and a bidi override are never live: no script ran, no element made.
    hostile_seen = False
    started = time.monotonic()

    # Bulk first: scan detections below 0.15 confidence, verified in one step.
    page.keys("b")
    page.wait(lambda: browser.find_element("id", "bulk").is_displayed(), "the bulk panel")
    page.keys("scan", Keys.TAB, "0.15")
    page.wait(lambda: browser.find_element("id", "bulk-count").text.startswith("4 items match"), "the bulk count")
    page.decide(Keys.ENTER)
    assert "verify: 4 items saved" in page.status()

    # j/k and arrows move without deciding.
    first = page.current
    page.keys("j")
    page.wait(lambda: page.current != first, "j")
    page.keys(Keys.ARROW_UP)
    page.wait(lambda: page.current == first, "arrow up")

    skipped = set()
    undone = False
    while page.current and page.current not in skipped:
        title, kind = page.title, page.kind
        if title == "Possession":
            # Typed faster than a decision is saved: the second v waits and verifies the next item.
            before, nxt = page.finished, "Gilead"
            page.keys("v", "v")
            page.wait(lambda: page.finished >= before + 2, "two decisions typed at once")
            assert "changed since" not in page.status()
            assert page.title not in ("Possession", nxt)
            page.decisions += 2
        elif title == HOSTILE:
            hostile_seen = True
            assert browser.execute_script("return window.pwned") is None
            assert len(browser.find_elements("tag name", "script")) == 1
            assert len(browser.find_elements("css selector", "#item b, #queue b")) == 0
            assert "[U+202E]" in browser.find_element("id", "queue-list").text
            page.decide("e", "Safe Title", Keys.ENTER)
        elif title == "Undo Me" and not undone:
            page.decide("v")
            page.decide("u")
            assert page.title == "Undo Me", "undo shows the item again"
            undone = True
        elif title == "Undo Me":
            # Where it stands in the queue (newest first) depends on when each row was stored. Skipped
            # as the last item, the page stays on it and the walk is over; else the next item shows
            # (the page moves only once that item is read, so the old id is no sign of a move).
            skipped_id = page.current
            skipped.add(skipped_id)
            is_last = page.js("return state.index === state.items.length - 1")
            page.keys("s")
            if is_last:
                page.wait(lambda: "Skipped." in page.status(), "the skip")
                break
            page.wait(lambda: page.current not in ("", skipped_id), "the item after the skipped one")
        elif title == "Dune Mesiah":
            page.decide("e", "Dune Messiah", Keys.ENTER)
        elif title == "Cancel Edit":
            page.keys("e", "zzz")
            page.keys(Keys.ESCAPE)
            page.wait(lambda: page.title == "Cancel Edit", "the cancelled edit")
            page.decide("v")
        elif title == "Wrong Book":
            page.decide("n")
        elif title == "Catalog Pick":
            page.keys("/")
            page.wait(lambda: browser.find_element("id", "search").is_displayed(), "the search panel")
            page.keys("dune messiah")
            page.wait(lambda: len(browser.find_elements("css selector", "#search-hits li")) > 0, "catalogue hits")
            page.decide(Keys.ENTER)
        elif title == "STATION ELEVEN":
            page.decide("v")
            assert "verify: 4 items saved" in page.status(), "identical detections are decided once for all"
        elif kind == "match":
            page.decide("1")
        else:
            page.decide("v")
    elapsed = time.monotonic() - started
    assert hostile_seen

    print(f"\nbrowser reviewer: {page.decisions} decisions (34 items) in {elapsed:.1f} s = "
          f"{page.decisions / elapsed * 60:.0f} decisions per minute")
    assert page.decisions >= 25

    # Stop the server as a person does (Ctrl-C): it cleans up and exits 0.
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=TIMEOUT) == 0, process.stderr.read()

    records = {record["id"]: record for record in
               (json.loads(line) for line in run(folder, "export", "--format", "jsonl", "--library", "lib.sqlite").splitlines())}
    by_title = {}
    for record in records.values():
        by_title.setdefault(record["title"], []).append(record)
    queued = [json.loads(line) for line in run(folder, "review", "list", "--json", "--library", "lib.sqlite").splitlines()]
    assert [item["title"] for item in queued] == ["Undo Me"], "only the skipped item waits"
    assert by_title["Safe Title"][0]["reviewStatus"] == "userEdited"
    assert by_title["Safe Title"][0]["provenance"]["title"] == "person"
    assert HOSTILE not in by_title
    assert by_title["Dune Messiah"][0]["reviewStatus"] == "userEdited"
    assert by_title["Cancel Edit"][0]["reviewStatus"] == "verified"
    assert by_title["Possession"][0]["reviewStatus"] == "verified" and by_title["Gilead"][0]["reviewStatus"] == "verified"
    assert by_title["Wrong Book"][0]["status"] == "notFound"
    assert all(record["reviewStatus"] == "verified" for record in by_title["STATION ELEVEN"])
    assert len(by_title["STATION ELEVEN"]) == 4
    for name in ("Bulk One", "Bulk Two", "Bulk Three", "Bulk Four"):
        assert by_title[name][0]["reviewStatus"] == "verified"
    assert "Catalog Pick" not in by_title, "the catalogue's book replaced the misread title"
    chosen = [record for record in records.values() if record["format"] != "scan" and record.get("match")
              and record["provenance"].get("match") == "person"]
    assert len(chosen) == 1
