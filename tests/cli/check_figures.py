#!/usr/bin/env python3
"""Opens figures in headless Chromium and checks them as a reader sees them (check_figures.js):
no overlapping labels, every series in a legend, enough ticks, colour bars on heatmaps, numbers
right-aligned in the report's tables. Exit 0 when all hold, 1 listing what does not.
  check_figures.py CHROMIUM WORKDIR report.html|figure.svg...
SVGs are inlined into one page; an HTML file is checked as it is (the script appended)."""
import html
import json
import os
import re
import subprocess
import sys

chromium, work, inputs = sys.argv[1], sys.argv[2], sys.argv[3:]
script = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_figures.js")).read()
os.makedirs(work, exist_ok=True)
pages = []
svgs = [p for p in inputs if p.endswith(".svg")]
if svgs:
    body = "".join("<div>%s</div>\n" % open(p).read() for p in svgs)
    pages.append(("figures", "<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>%s</body></html>" % body))
for p in inputs:
    if p.endswith(".html"):
        pages.append((os.path.basename(p), open(p).read()))
failed = False
for label, text in pages:
    page = os.path.join(work, "check-%s.html" % re.sub(r"[^A-Za-z0-9.-]", "_", label))
    text = text.replace("</body>", "<script>%s</script></body>" % script, 1)
    open(page, "w").write(text)
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                          "--disable-component-update", "--disable-sync", "--user-data-dir=" + os.path.join(work, "chrome-profile"),
                          "--window-size=1200,1600", "--dump-dom", "file://" + os.path.abspath(page)],
                         capture_output=True, text=True, timeout=120).stdout
    m = re.findall(r'<pre id="figure-check">(\{.*?)</pre>', dom, re.S)
    if not m:
        print("%s: the check did not run in the browser" % label)
        failed = True
        continue
    result = json.loads(html.unescape(m[-1]))
    print("%s: %d figure(s), %d problem(s)" % (label, result["figures"], len(result["problems"])))
    for p in result["problems"]:
        print("  " + p)
    failed = failed or bool(result["problems"]) or result["figures"] == 0
sys.exit(1 if failed else 0)
