"""Documented check: JupyterLab renders a course notebook with its live widgets (docs/course.md).

Start JupyterLab from the repository root first (the environment of scripts/setup.sh)::

    PYTHONPATH=$PWD jupyter lab --no-browser --port 8899 --ServerApp.token=check &
    python docs/jupyterlab_screenshot.py docs/jupyterlab_course_explorer.png

It opens ``notebooks/learn/01_ldp_features.ipynb`` in headless Chromium (``/usr/bin/chromium``, or
``$DPGNN_CHROMIUM``) through Playwright, runs all cells, waits for the explorers' controls, moves the first slider
with the keyboard (the figure above it is redrawn in place) and saves a screenshot. It exits non-zero when no widget
row or no figure appears. The notebook is not saved (nothing in the repository changes).
"""

import os
import sys
import time

from playwright.sync_api import sync_playwright

PORT = os.environ.get("LAB_PORT", "8899")
TOKEN = os.environ.get("LAB_TOKEN", "check")
URL = f"http://127.0.0.1:{PORT}/lab/tree/notebooks/learn/01_ldp_features.ipynb?token={TOKEN}"


def main(out: str) -> int:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=os.environ.get("DPGNN_CHROMIUM", "/usr/bin/chromium"),
            args=["--no-sandbox", "--headless", "--disable-gpu", "--disable-dev-shm-usage"],
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(URL, wait_until="domcontentloaded")
        page.wait_for_selector(".jp-Notebook", timeout=90_000)
        time.sleep(10)  # kernel start
        page.click("text=Run", timeout=20_000)
        page.click("text=Run All Cells", timeout=20_000)
        page.wait_for_selector(".widget-hbox", timeout=90_000)
        time.sleep(20)  # the remaining cells
        page.locator(".widget-hbox").first.scroll_into_view_if_needed()
        page.mouse.wheel(0, 250)
        slider = page.locator(".widget-hbox .noUi-handle").nth(0)
        slider.focus()
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        time.sleep(6)
        page.screenshot(path=out)
        rows = page.locator(".widget-hbox").count()
        images = page.locator(".jp-OutputArea-output img").count()
        browser.close()
    print(f"{rows} widget rows, {images} figures -> {out}")
    return 0 if rows and images else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "docs/jupyterlab_course_explorer.png"))
