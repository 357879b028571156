"""The results page ``index.html``: its content, and the page itself in a real headless browser
(Chromium driven by Selenium; skipped, saying why, only where no browser can be started)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pandas as pd
import pytest
from _stored import store_binary_matchups  # tests/_stored.py

from arena import summarize
from arena.aggregate import write_tables
from arena.plots.html import verdicts


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """A results directory of 2 forecasters x 2 natures x 2 seeds at T = 100, its tables, a red-team
    table and its report (PNG figures and index.html)."""
    out = tmp_path_factory.mktemp("page")
    store_binary_matchups(out, ("k29", "running_mean"), ("iid_bernoulli", "sinusoid"), (0, 1), T=100)
    write_tables(out)
    # a table of another part of the arena, e.g. attacks against certificates: shown as it is
    pd.DataFrame({"attack": ["flip", "drift"], "certificate": ["smce", "bit"], "broken": [False, True]}).to_csv(
        out / "redteam.csv", index=False
    )
    paths = summarize.report(out, formats=("png",), quiet=True)
    return out, paths


def test_verdicts_put_failures_first_and_never_count_na_as_a_pass():
    s = pd.DataFrame(
        {
            "forecaster": ["a", "a", "a", "b", "b", "c"],
            "nature": ["n", "m", "o", "n", "m", "n"],
            "cert.x.holds": [True, True, None, True, False, None],
        }
    )
    v = verdicts(s)  # results with only `holds`: a missing one is a certificate not claimed (c: no row)
    assert v[["forecaster", "holds", "fails", "n/a", "failing natures"]].values.tolist() == [
        ["b", 1, 1, 0, "m"],
        ["a", 2, 0, 0, ""],
    ]
    # the three verdicts, where the results have them, win over holds; n/a is counted, never as a pass
    s["cert.x.verdict"] = ["holds", "n/a", "n/a", "fails", "fails", None]
    v = verdicts(s)
    assert v[["forecaster", "holds", "fails", "n/a"]].values.tolist() == [["b", 0, 2, 0], ["a", 1, 0, 2]]


def test_page_shows_every_figure_table_and_verdict(page):
    out, paths = page
    html = (out / "index.html").read_text()
    assert out / "index.html" in paths
    pngs = sorted(p.relative_to(out).as_posix() for p in paths if p.suffix == ".png")
    assert pngs and all(f'src="{p}"' in html for p in pngs)
    assert html.count("<figcaption>") == len(pngs)
    for name in ("summary.parquet", "summary.csv", "leaderboard.csv", "paired.csv", "redteam.csv"):
        assert f'href="{name}"' in html, name
    assert "<summary>redteam</summary>" in html
    assert html.index("<summary>redteam</summary>") < html.index("Paired comparisons")
    assert 'class="sortable"' in html and "<script>" in html
    assert "http://" not in html and "https://" not in html  # nothing outside the results directory


def test_each_figure_is_given_its_size_so_none_is_squeezed(page):
    """A figure is shown at its pixel size (150 an inch drawn: more than its drawn width at 96 CSS pixels an
    inch), so a column-wide one is never squeezed; the CSS caps it at the page's width, keeping its shape."""
    from PIL import Image

    out, paths = page
    html = (out / "index.html").read_text()
    pngs = [p for p in paths if p.suffix == ".png"]
    assert pngs
    for p in pngs:
        w, h = Image.open(p).size
        assert f'src="{p.relative_to(out).as_posix()}" width="{w}" height="{h}"' in html, p
    assert "max-width:100%;height:auto" in html


def test_the_answer_comes_first_and_big_tables_are_folded_and_short(page):
    out, _ = page
    html = (out / "index.html").read_text()
    # the answer of the game and T, then the figures, then everything else
    first = html.index('class="answer"')
    assert first < html.index("id=figures") < html.index("id=certificates") < html.index("id=leaderboards")
    answer = html[first : html.index("id=figures")]
    for text in ("rank", "worst case", "worst nature", "minimax weight", "Certificates: 0 failures"):
        assert text in answer, text
    pairs = pd.read_csv(out / "pairs.csv")
    if "error" in pairs and pairs["error"].notna().all():  # the pairs could not be replayed: the page says why
        assert "Pairs not compared: " in answer
    else:
        assert " beats " in answer or "no claim yet" in answer
        assert "Tiers (" in answer
    assert "smce_over_T" in answer  # the headline metric's leaderboard
    md = (out / "summary.md").read_text()  # summary.md leads with the same answer
    assert md.split("\n## ", 1)[1].startswith("Answer for binary, T = 100: smCE/T")
    # a table of the directory shows at most 20 rows, folded, with a link to the whole
    paired = html[html.index("<summary>Paired comparisons") :]
    paired = paired[: paired.index("</details>")]
    assert 'href="paired.csv"' in paired and 0 < paired.count("<tr>") - 1 <= 20


def test_numbers_are_for_people():
    from arena.plots.html import _cell

    assert _cell(464627577)["text"] == "4.65e8" and _cell(464627577.0)["text"] == "4.65e8"
    assert _cell(0.0412)["text"] == "0.0412" and _cell(12)["text"] == "12"


def _browser():
    """A headless Chromium under Selenium, or a skip that says what is missing."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install '.[test]')")
    binary = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver_path = shutil.which("chromedriver")
    if not binary or not driver_path:
        pytest.skip("no Chromium or chromedriver here (apt-get install -y chromium chromium-driver)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,1600",
        "--allow-file-access-from-files",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    from selenium.webdriver.chrome.service import Service

    try:
        return webdriver.Chrome(service=Service(driver_path), options=opts)
    except Exception as exc:  # noqa: BLE001  (a browser that is installed but cannot start here)
        pytest.skip(f"Chromium did not start: {str(exc).splitlines()[0]}")


def test_page_in_a_headless_browser(page, tmp_path):
    out, _ = page
    from selenium.webdriver.common.by import By

    driver = _browser()
    try:
        driver.get((out / "index.html").as_uri())
        assert driver.title.startswith("Arena results")
        # every image loaded (decoded, with a size), every link names a file that is there
        images = driver.execute_script(
            "return Array.from(document.images).map(i => [i.getAttribute('src'), i.complete, i.naturalWidth]);"
        )
        assert images and all(done and width > 0 for _, done, width in images), images
        hrefs = [a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "a[href]")]
        assert hrefs
        for href in hrefs:
            url = urlparse(href)
            assert url.scheme == "file" and Path(unquote(url.path)).is_file(), href
        # the answer in the first screen (1400 x 900): the headline leaderboard and its three lines
        driver.set_window_size(1400, 900)
        inner = driver.execute_script("return [window.innerWidth, window.innerHeight]")
        bottom = driver.execute_script("return document.querySelector('section.answer').getBoundingClientRect().bottom")
        assert bottom <= inner[1], (bottom, inner)
        assert "Certificates: 0 failures" in driver.find_element(By.CSS_SELECTOR, "section.answer").text
        # sorting: the answer's leaderboard by its mean, up then down
        table = driver.find_element(By.CSS_SELECTOR, "section.answer table.sortable")
        heads = table.find_elements(By.TAG_NAME, "th")
        col = [h.text for h in heads].index("mean")

        def column():
            return [
                float(r.find_elements(By.TAG_NAME, "td")[col].text)
                for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")
            ]

        heads[col].click()
        up = column()
        assert len(up) == 2 and up == sorted(up)
        heads[col].click()
        assert column() == sorted(up, reverse=True)
        # failures in red: the verdicts' rows that fail have the class, and only they
        for row in driver.find_elements(By.CSS_SELECTOR, "#certificates ~ details table tbody tr"):
            fails = int(row.find_elements(By.TAG_NAME, "td")[3].get_attribute("textContent"))
            assert ("fail" in (row.get_attribute("class") or "")) == (fails > 0)
            break
        # every figure at its drawn width or more (150 pixels an inch drawn, 96 CSS pixels an inch)
        shown = driver.execute_script(
            "return Array.from(document.images).map(i => [i.naturalWidth, i.getBoundingClientRect().width]);"
        )
        assert all(w >= nw / 150 * 96 for nw, w in shown), shown
        shot = tmp_path / "index.png"
        driver.save_screenshot(str(shot))
        assert shot.stat().st_size > 10_000
        if os.environ.get("ARENA_ARTIFACTS"):  # CI keeps the screenshot
            Path(os.environ["ARENA_ARTIFACTS"]).mkdir(parents=True, exist_ok=True)
            shutil.copy(shot, Path(os.environ["ARENA_ARTIFACTS"]) / "index.png")
        errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        assert not errors, errors
        # a phone (390 px): no horizontal scroll but inside tables
        driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}
        )
        driver.get((out / "index.html").as_uri())
        width = driver.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert width[0] <= width[1] <= 390, width
        shown = driver.execute_script(
            "return Array.from(document.images).map(i => [i.naturalWidth, i.naturalHeight,"
            " i.getBoundingClientRect().width, i.getBoundingClientRect().height]);"
        )
        for nw, nh, w, h in shown:  # capped at the page's width, the same shape
            assert w <= width[1] and abs(h / w - nh / nw) < 0.02, (nw, nh, w, h)
    finally:
        driver.quit()


def test_the_top_comparison_and_the_tiers_in_words():
    from arena.plots.answer import comparison_line, tiers_line

    pairs = pd.DataFrame(
        {
            "game": "binary",
            "T": 500,
            "metric": "brier",
            "forecaster_a": ["k29", "window_mean", "k29", "ogd", "window_mean", "ogd"],
            "forecaster_b": ["window_mean", "k29", "ogd", "k29", "ogd", "window_mean"],
            "mean": [-0.02, 0.02, -0.05, 0.05, -0.03, 0.03],
            "e_value": [464627577.0, 0.01, 1e9, 0.0, 50.0, 0.1],
            "e_bh": [True, False, True, False, True, False],
            "e_bh_at": [441.0, None, 12.0, None, 300.0, None],
        }
    )
    assert comparison_line(pairs, pd.DataFrame()) == (
        "k29 beats window_mean on Brier, e-value 4.65e8, decided at t = 441 (e-BH over every pair)."
    )
    tiers = pd.DataFrame(
        {
            "game": "binary",
            "T": 500,
            "metric": "brier",
            "forecaster": ["k29", "window_mean", "ogd"],
            "tier": [1, 2, 3],
            "mean": [0.2, 0.22, 0.25],
            "method": "e-BH",
        }
    )
    assert tiers_line(tiers) == "Tiers (e-BH, Brier): 1: k29 · 2: window_mean · 3: ogd."
