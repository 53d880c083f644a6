// Run inside headless Chromium on a page holding figures (the report, or the SVGs inlined): checks
// what a reader needs from each figure, as rendered, and writes the problems found as JSON into
// <pre id="figure-check">. Used by check_figures.py.
//   - no two labels overlap (text boxes as laid out, rotation included) and none leaves the canvas;
//   - every series (g.series[data-series]) has a legend entry with the same name;
//   - a numeric y axis has three or more tick labels, an x axis two or more;
//   - no axis repeats a tick label;
//   - a heatmap (cells coloured by value) has a colour bar;
//   - in the report, every table cell that holds a number is right-aligned.
(function () {
  const problems = [];
  const name = (svg, i) => (svg.querySelector("title") || {}).textContent || "figure " + i;

  function corners(el) {
    const b = el.getBBox();
    const m = el.getCTM();
    const pt = el.ownerSVGElement.createSVGPoint();
    // shrink by a pixel: glyph boxes include line spacing, so text that only touches is not reported
    return [[b.x + 1, b.y + 1], [b.x + b.width - 1, b.y + 1], [b.x + b.width - 1, b.y + b.height - 1], [b.x + 1, b.y + b.height - 1]].map(
      ([x, y]) => {
        pt.x = x;
        pt.y = y;
        const p = pt.matrixTransform(m);
        return [p.x, p.y];
      });
  }
  // separating axis theorem on two convex quadrilaterals
  function overlap(a, b) {
    for (const poly of [a, b])
      for (let i = 0; i < 4; i++) {
        const [x1, y1] = poly[i], [x2, y2] = poly[(i + 1) % 4];
        const nx = y2 - y1, ny = x1 - x2;
        const pa = a.map(([x, y]) => x * nx + y * ny), pb = b.map(([x, y]) => x * nx + y * ny);
        if (Math.max(...pa) <= Math.min(...pb) || Math.max(...pb) <= Math.min(...pa)) return false;
      }
    return true;
  }

  document.querySelectorAll("svg").forEach((svg, i) => {
    const fig = name(svg, i);
    const vb = svg.viewBox.baseVal;
    const texts = [...svg.querySelectorAll("text")].filter((t) => t.textContent.trim() !== "");
    const boxes = texts.map((t) => corners(t));
    for (let a = 0; a < texts.length; a++) {
      for (const [x, y] of boxes[a])
        if (x < vb.x - 0.5 || y < vb.y - 0.5 || x > vb.x + vb.width + 0.5 || y > vb.y + vb.height + 0.5) {
          problems.push(fig + ": label \"" + texts[a].textContent + "\" leaves the canvas");
          break;
        }
      for (let b = a + 1; b < texts.length; b++)
        if (overlap(boxes[a], boxes[b]))
          problems.push(fig + ": labels overlap: \"" + texts[a].textContent + "\" and \"" + texts[b].textContent + "\"");
    }
    const legend = new Set([...svg.querySelectorAll("g.legend-entry")].map((g) => g.dataset.series));
    for (const g of svg.querySelectorAll("g.series"))
      if (!legend.has(g.dataset.series)) problems.push(fig + ": series \"" + g.dataset.series + "\" is not in the legend");
    const ty = svg.querySelectorAll("text.tick-y").length, tx = svg.querySelectorAll("text.tick-x").length;
    const rows = svg.querySelectorAll("text.row-label").length;
    if (rows === 0 && ty < 3) problems.push(fig + ": " + ty + " y tick label(s), fewer than 3");
    if (tx < 2) problems.push(fig + ": " + tx + " x tick label(s), fewer than 2");
    for (const cls of ["tick-x", "tick-y"]) {  // one label twice on an axis says nothing
      const labels = [...svg.querySelectorAll("text." + cls)].map((t) => t.textContent);
      if (new Set(labels).size !== labels.length) problems.push(fig + ": repeated " + cls + " labels: " + labels.join(" "));
    }
    // a heatmap is a figure with cells coloured by value: it needs the scale that reads them
    if (svg.querySelector(".cell") && !svg.querySelector(".colour-bar")) problems.push(fig + ": a heatmap without a colour bar");
  });

  document.querySelectorAll("td").forEach((td) => {
    const t = td.textContent.trim();
    const n = "[-+−]?[0-9][0-9,]*(\\.[0-9]+)?(e[-+]?[0-9]+)?( ?[%×])?";  // as html.cpp's numeric()
    if ((t === "NaN" || new RegExp("^(" + n + "|\\[" + n + ", " + n + "\\])$").test(t)) && getComputedStyle(td).textAlign !== "right")
      problems.push("table cell \"" + t + "\" (a number) is not right-aligned");
  });

  const out = document.createElement("pre");
  out.id = "figure-check";
  out.textContent = JSON.stringify({figures: document.querySelectorAll("svg").length, problems: problems});
  document.body.appendChild(out);
})();
