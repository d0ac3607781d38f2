// bwprof's HTML report: draws the page's data (the JSON block "bwprof-data", every figure computed
// by bwprof in Python) with the inlined plotly.js, and lets the reader filter, zoom and sort. It
// computes no figure of its own; it only picks, formats and draws.
(function () {
  "use strict";
  var hook = (window.bwprofReport = { ready: false, errors: [], points: {}, charts: [] });
  window.addEventListener("error", function (e) { hook.errors.push(String(e.message || e)); });
  var D = JSON.parse(document.getElementById("bwprof-data").textContent);
  hook.data = D;
  var PALETTE = ["#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb", "#ee8866",
                 "#44bb99", "#99ddff", "#dddd77", "#ffaabb", "#77aadd", "#eedd88"];
  var SYMBOLS = ["circle", "square", "triangle-up", "triangle-down", "diamond", "cross", "x", "star",
                 "hexagon", "pentagon", "triangle-left", "triangle-right"];
  var CONFIG = { displaylogo: false, responsive: true, scrollZoom: false };
  // Past this many points a chart draws them with WebGL (scattergl), where the browser has it:
  // SVG markers cost the page seconds at 10,000 rows.
  var GL_POINTS = 2000;
  var glChecked = null;
  function hasGL() {  // asked only for a chart that needs it: a WebGL context costs the page time
    if (glChecked === null) {
      try { var c = document.createElement("canvas"); glChecked = !!(c.getContext("webgl") || c.getContext("experimental-webgl")); }
      catch (e) { glChecked = false; }
      hook.webgl = glChecked;
    }
    return glChecked;
  }

  function el(tag, attrs) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (k === "text") e.textContent = attrs[k];
      else if (k === "cls") e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    for (var i = 2; i < arguments.length; i++) if (arguments[i] != null) e.appendChild(arguments[i]);
    return e;
  }
  function dec(c) { return c ? c.codes.map(function (i) { return c.values[i]; }) : null; }
  function sig(v, d) {
    if (v == null || !isFinite(v)) return "-";
    var a = Math.abs(v);
    if (a >= 1e5 || (a > 0 && a < 1e-3)) return v.toExponential(2);
    return Number(v.toPrecision(d || 3)).toString();
  }
  function rate(v, unit) {
    if (v == null || !isFinite(v)) return "-";
    var big = { "GB/s": "TB/s", "GFLOP/s": "TFLOP/s" }[unit];
    return v >= 1000 ? sig(v / 1000) + " " + big : sig(v) + " " + unit;
  }
  function time(us) {
    if (us == null || !isFinite(us)) return "-";
    if (us >= 1e6) return sig(us / 1e6) + " s";
    if (us >= 1e3) return sig(us / 1e3) + " ms";
    return sig(us) + " us";
  }
  function bytes(b) {
    if (b == null || !isFinite(b)) return "-";
    var u = [["GB", 1e9], ["MB", 1e6], ["kB", 1e3]];
    for (var i = 0; i < u.length; i++) if (b >= u[i][1]) return sig(b / u[i][1]) + " " + u[i][0];
    return sig(b) + " B";
  }
  function wrap(text, width) {
    var words = String(text || "").split(" "), lines = [], cur = "";
    words.forEach(function (w) {
      if (cur && (cur + " " + w).length > width) { lines.push(cur); cur = w; } else cur = cur ? cur + " " + w : w;
    });
    if (cur) lines.push(cur);
    return lines.join("<br>");
  }
  function esc(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }
  function section(id, title, note) {
    var s = el("section", { id: id, cls: "card" }, el("h2", { text: title }));
    if (note) s.appendChild(el("p", { cls: "note", text: note }));
    document.getElementById("report").appendChild(s);
    return s;
  }
  // A chart below the first screen is drawn when it comes near the viewport (or before printing,
  // or when bwprofReport.drawAll() is called): with 10,000 rows each chart costs the page hundreds
  // of milliseconds, and the reader sees the first screen without waiting for all of them.
  var pending = {};
  hook.drawn = {};
  var observer = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (e) { if (e.isIntersecting) drawNow(e.target.id); });
  }, { rootMargin: "400px 0px" }) : null;
  function drawNow(id) {
    var p = pending[id];
    if (!p) return;
    delete pending[id];
    if (observer) observer.unobserve(p.div);
    var t0 = performance.now();
    Plotly.newPlot(p.div, p.traces, p.layout, CONFIG);
    if (p.after) p.after(p.div);
    hook.drawn[id] = Math.round(performance.now() - t0);
  }
  hook.drawAll = function () { Object.keys(pending).forEach(drawNow); return Object.keys(hook.drawn).length; };
  window.addEventListener("beforeprint", hook.drawAll);
  function plot(div, traces, layout, opts) {
    opts = opts || {};
    ["xaxis", "yaxis"].forEach(function (a) {  // plotly.js 3 takes an axis title as {text}
      if (layout[a] && typeof layout[a].title === "string") layout[a].title = { text: layout[a].title };
      if (layout[a]) layout[a].automargin = true;
    });
    layout = Object.assign({ margin: { l: 70, r: 20, t: 34, b: 55 }, font: { size: 12 }, hovermode: "closest",
                             legend: { font: { size: 11 } }, plot_bgcolor: "#fff" }, layout);
    if (hook.charts.indexOf(div.id) < 0) hook.charts.push(div.id);
    pending[div.id] = { div: div, traces: traces, layout: layout, after: opts.after };
    if (opts.now || !observer || div.data) { drawNow(div.id); return; }  // a chart once drawn redraws at once
    div.style.minHeight = (layout.height || 450) + "px";
    observer.observe(div);
  }

  // ---- header: what ran where, when, with which bwprof, by which command ---------------------
  function header() {
    var m = D.meta, dev = m.device || {};
    var root = document.getElementById("report");
    root.appendChild(el("h1", { text: D.title }));
    if (D.verdict) root.appendChild(el("p", { id: "verdict", cls: "verdict", text: D.verdict }));
    var rows = [
      ["device", [dev.name, dev.id ? "(" + dev.id + ")" : "", dev.arch || ""].filter(Boolean).join(" ") || "not recorded"],
      ["kind of run", D.kind + (m.tool ? " (" + m.tool + ")" : "")],
      ["run made", m.run_created || "not recorded"],
      ["measured with", m.bwprof_version ? "bwprof " + m.bwprof_version : "not recorded"],
      ["command", m.command || "not recorded"],
      ["source", m.source || "(a Python object)"],
      ["clocks", m.clocks],
      ["report made", m.report_created + " by bwprof " + m.report_bwprof_version]
    ];
    var dl = el("dl", { id: "meta", cls: "meta" });
    rows.forEach(function (r) { dl.appendChild(el("dt", { text: r[0] })); dl.appendChild(el("dd", { text: r[1] })); });
    var other = Object.keys(dev).filter(function (k) { return ["name", "id", "arch"].indexOf(k) < 0; });
    if (other.length) {
      var det = el("details", null, el("summary", { text: "device properties" }));
      var t = el("table", { cls: "small" });
      other.forEach(function (k) { t.appendChild(el("tr", null, el("th", { text: k }), el("td", { text: String(dev[k]) }))); });
      det.appendChild(t);
      dl.appendChild(el("dt", { text: "" }));
      dl.appendChild(el("dd", null, det));
    }
    root.appendChild(dl);
    (D.notes || []).forEach(function (n) { root.appendChild(el("p", { cls: "note", text: n })); });
    if (D.roofline && D.roofline.ceilings && D.roofline.ceilings.length) {
      var sec = section("peaks", "Peaks (the roofs the rows are judged against)");
      var C = D.roofline.ceilings, cols = ["name", "dtype", "kind", "value", "unit", "source", "detail"];
      sec.appendChild(table({ columns: cols, kinds: cols.map(function (c) { return c === "value" ? "number" : "text"; }),
                              rows: C.map(function (c) { return cols.map(function (k) { return c[k]; }); }) }, "peaks-table"));
    }
  }

  // ---- the rows: decoded once, filtered by family, dtype and bound -----------------------------
  var R = null, state = { colour: "family", level: "declared", hidden: { family: {}, dtype: {}, bound: {} } };
  function decodeRows() {
    var r = D.rows;
    R = { n: r.n, kernel: dec(r.kernel), variant: dec(r.variant), family: dec(r.family), dtype: dec(r.dtype),
          shape: dec(r.shape), label: dec(r.label), op: dec(r.op), time: r.time_us, gbs: r.gbs, gflops: r.gflops,
          bytes: r.bytes, above: r.above_peak, bottleneck: dec(r.bottleneck), levels: {} };
    Object.keys(r.levels).forEach(function (k) {
      var L = r.levels[k];
      R.levels[k] = { label: L.label, x: L.x, pct: L.pct, roof: dec(L.roof), bound: dec(L.bound) };
    });
  }
  function shown(i) {
    var h = state.hidden, L = R.levels[state.level];
    return !h.family[R.family[i]] && !h.dtype[R.dtype[i]] && !h.bound[L.bound[i]];
  }
  function colourOf(key, i) {
    if (state.colour === "dtype") return (D.colors || {})[key] || PALETTE[i % PALETTE.length];
    return PALETTE[i % PALETTE.length];
  }
  function distinct(a) { var seen = {}, out = []; a.forEach(function (v) { if (!seen[v]) { seen[v] = 1; out.push(v); } }); return out; }
  // The hover of a row, made when the mouse reaches its point (not once per point at load).
  function hoverHtml(i) {
    var L = R.levels[state.level];
    var name = R.kernel[i] + (R.label[i] && R.label[i] !== R.kernel[i] ? " (" + R.label[i] + ")" : "");
    var lines = ["<b>" + esc(name) + "</b>",
                 "variant " + esc(R.variant[i] || "-") + ", " + esc(R.dtype[i] || "-") + ", shape " + esc(R.shape[i] || "-"),
                 "time " + time(R.time[i]) + ", " + bytes(R.bytes[i]) + " moved",
                 rate(R.gbs[i], "GB/s") + ", " + rate(R.gflops[i], "GFLOP/s"),
                 (L.pct[i] == null ? "-" : sig(L.pct[i]) + " %") + " of the " + esc(L.roof[i] || "-") + " roof (the one that binds it)",
                 "bound: " + esc(L.bound[i] || "-"), wrap(esc(R.bottleneck[i]), 70)];
    if (R.above[i]) lines.push("<b>above a roof (data in cache?)</b>");
    return lines.join("<br>");
  }
  var tip = null;
  function tooltip(div) {
    if (!tip) { tip = el("div", { id: "bwprof-tooltip", cls: "tooltip" }); document.body.appendChild(tip); }
    div.on("plotly_hover", function (ev) {
      var p = ev.points && ev.points[0];
      if (!p || !p.data.meta || !p.data.meta.points) return;
      tip.innerHTML = hoverHtml(p.customdata);
      tip.setAttribute("data-row", p.customdata);
      var x = ev.event ? ev.event.clientX : 0, y = ev.event ? ev.event.clientY : 0;
      tip.style.display = "block";
      var w = tip.offsetWidth, h = tip.offsetHeight;
      tip.style.left = Math.max(4, x + 16 + w > window.innerWidth ? x - w - 16 : x + 16) + "px";
      tip.style.top = Math.max(4, Math.min(window.innerHeight - h - 4, y - h / 2)) + "px";
    });
    div.on("plotly_unhover", function () { tip.style.display = "none"; });
  }
  function pointTraces(xOf, yOf, chart) {
    var keyOf = state.colour === "dtype" ? R.dtype : R.family;
    var keys = distinct(keyOf), fams = distinct(R.family), groups = {};
    for (var i = 0; i < R.n; i++) {
      var x = xOf(i), y = yOf(i);
      if (!(x > 0) || !(y > 0) || !shown(i)) continue;
      var k = keyOf[i];
      (groups[k] = groups[k] || { x: [], y: [], sym: [], rows: [] });
      groups[k].x.push(x); groups[k].y.push(y); groups[k].rows.push(i);
      groups[k].sym.push(state.colour === "dtype" ? SYMBOLS[fams.indexOf(R.family[i]) % SYMBOLS.length] : "circle");
    }
    var count = 0, out = [];
    keys.forEach(function (k) { if (groups[k]) count += groups[k].x.length; });
    var type = count > GL_POINTS && hasGL() ? "scattergl" : "scatter";
    keys.forEach(function (k, j) {
      var g = groups[k];
      if (!g) return;
      out.push({ type: type, mode: "markers", name: k || "(none)", x: g.x, y: g.y, customdata: g.rows,
                 hoverinfo: "none", meta: { points: true },
                 // one symbol for the trace where all are alike: a per-point array costs WebGL time
                 marker: { size: 9, color: colourOf(k, j), symbol: state.colour === "dtype" ? g.sym : "circle",
                           line: { width: 0.6, color: "#222" } } });
    });
    hook.points[chart] = count;
    return out;
  }

  // ---- the roofline ------------------------------------------------------------------------------
  function roofTraces() {
    var out = [], rf = D.roofline;
    rf.roofs.forEach(function (r) {
      out.push({ type: "scatter", mode: "lines", x: r.x, y: r.y, hoverinfo: "skip", legendgroup: "roofs",
                 name: r.dtype + " " + r.kind + ", " + r.source + ": " + rate(r.bandwidth_gbs, "GB/s") +
                   (r.kind !== "memory" ? ", " + rate(r.gflops, "GFLOP/s") : ""),
                 line: { color: r.color, width: r.source === "measured" ? 2.6 : 1.4,
                         dash: r.source === "measured" ? "solid" : "dash" }, opacity: r.kind === "matrix" ? 0.75 : 1 });
    });
    rf.levels.forEach(function (l) {
      out.push({ type: "scatter", mode: "lines", x: l.x, y: l.y, hoverinfo: "skip", legendgroup: "levels",
                 name: l.name + ", measured: " + rate(l.bandwidth_gbs, "GB/s"),
                 line: { color: l.kind === "l2" ? "#555" : "#999", width: 1.4, dash: "dashdot" } });
    });
    if (rf.ridges.length) {
      out.push({ type: "scatter", mode: "markers", name: "ridge points", x: rf.ridges.map(function (r) { return r.x; }),
                 y: rf.ridges.map(function (r) { return r.y; }), legendgroup: "roofs",
                 text: rf.ridges.map(function (r) { return r.dtype + " " + r.kind + " " + r.source + ": ridge " + sig(r.x) + " FLOP/B"; }),
                 hoverinfo: "text", marker: { symbol: "diamond-open", size: 9,
                                              color: rf.ridges.map(function (r) { return r.color; }) } });
    }
    rf.sweep.forEach(function (s) {
      out.push({ type: "scatter", mode: "lines+markers", x: s.x, y: s.y, name: (s.dtype + " intensity sweep (measured)").trim(),
                 line: { dash: "dot", color: s.color }, marker: { size: 4 }, hoverinfo: "x+y" });
    });
    return out;
  }
  function drawRoofline() {
    var div = document.getElementById("roofline-plot"), L = R.levels[state.level];
    var traces = roofTraces().concat(pointTraces(function (i) { return L.x[i]; }, function (i) { return R.gflops[i]; }, "roofline"));
    plot(div, traces, { xaxis: { type: "log", title: "arithmetic intensity (FLOP per byte of " + L.label + ")", exponentformat: "power" },
                        yaxis: { type: "log", title: "performance (GFLOP/s)", exponentformat: "power" }, height: 620 },
         { now: true, after: tooltip });
  }
  function drawSize() {
    var div = document.getElementById("size-plot"), S = D.size, tr = [];
    S.lines.forEach(function (ln, i) {
      tr.push({ type: "scatter", mode: "lines", x: ln.x, y: ln.y, hoverinfo: "skip",
                name: (ln.pattern ? ln.pattern + " " : "") + "fit: " + sig(ln.t0_us) + " us + B / " + rate(ln.bandwidth_gbs, "GB/s") +
                  (ln.residual_pct != null ? " (RMS " + sig(ln.residual_pct, 2) + " %)" : ""),
                line: { color: ln.pattern === "copy" ? "#1f5fa8" : "#c00000", width: 2, dash: i ? "dash" : "solid" } });
    });
    if (S.points.length) {
      tr.push({ type: "scatter", mode: "markers", name: "ceiling kernels (measured, cold)",
                x: S.points.map(function (p) { return p.bytes; }), y: S.points.map(function (p) { return p.gbs; }),
                text: S.points.map(function (p) { return p.kernel; }), hovertemplate: "%{text}: %{x:.3s} B, %{y:.4g} GB/s<extra></extra>",
                marker: { symbol: "circle-open", size: 6, color: "#555" } });
    }
    tr = tr.concat(pointTraces(function (i) { return R.bytes[i]; }, function (i) { return R.gbs[i]; }, "size"));
    plot(div, tr, { xaxis: { type: "log", title: "bytes moved per launch (read + written)", exponentformat: "SI" },
                    yaxis: { type: "log", title: "bandwidth (GB/s)" }, height: 520 }, { after: tooltip });
  }
  function checkGroup(box, what, values) {
    var g = el("fieldset", { cls: "filter", "data-filter": what }, el("legend", { text: what }));
    values.forEach(function (v) {
      var cb = el("input", { type: "checkbox", value: v });
      cb.checked = !state.hidden[what][v];
      cb.addEventListener("change", function () { state.hidden[what][v] = !cb.checked; redraw(); });
      g.appendChild(el("label", null, cb, document.createTextNode(" " + (v || "(none)"))));
    });
    box.appendChild(g);
  }
  function controls(box) {
    box.innerHTML = "";
    var colour = el("select", { id: "colour-by" });
    ["family", "dtype"].forEach(function (v) { var o = el("option", { value: v, text: v }); colour.appendChild(o); });
    colour.value = state.colour;
    colour.addEventListener("change", function () { state.colour = colour.value; redraw(); });
    var level = el("select", { id: "memory-level" });
    Object.keys(R.levels).forEach(function (k) { level.appendChild(el("option", { value: k, text: R.levels[k].label })); });
    level.value = state.level;
    if (Object.keys(R.levels).length < 2) level.disabled = true;
    level.addEventListener("change", function () { state.level = level.value; state.hidden.bound = {}; controls(box); redraw(); });
    box.appendChild(el("label", null, document.createTextNode("colour by "), colour));
    box.appendChild(el("label", { title: "the bytes the intensity is taken over; counters give DRAM and L2 bytes" },
                       document.createTextNode(" memory level "), level));
    checkGroup(box, "family", distinct(R.family));
    checkGroup(box, "dtype", distinct(R.dtype));
    checkGroup(box, "bound", distinct(R.levels[state.level].bound));
  }
  function timed(name, f) { var t0 = performance.now(); f(); hook.timing[name] = Math.round(performance.now() - t0); }
  function redraw() {
    if (D.roofline && D.roofline.roofs) timed("roofline", drawRoofline);
    if (D.size && (D.size.lines.length || R.n)) timed("size", drawSize);
    var count = document.getElementById("shown-count");
    if (count) count.textContent = hook.points.roofline + " of " + R.n + " rows on the roofline (" +
      (D.roofline.off_chart || 0) + " have no FLOPs); " + hook.points.size + " on the size chart";
  }
  function charts() {
    if (!D.rows) return;
    timed("decode", decodeRows);
    D.colors = {};
    (D.dtypes && D.dtypes.colors) ? Object.assign(D.colors, D.dtypes.colors) : null;
    D.roofline.roofs.forEach(function (r) { D.colors[r.dtype] = r.color; });
    var s = section("roofline", "Roofline", "bwprof's measured roofs (solid; theoretical dashed), the cache levels' " +
                    "(dash-dot) and every row with FLOPs as a point. Hover a point for its figures; drag to zoom, " +
                    "double-click to zoom out; click a legend entry to hide it.");
    var box = el("div", { cls: "controls", id: "roofline-controls" });
    s.appendChild(box);
    s.appendChild(el("p", { cls: "note", id: "shown-count" }));
    s.appendChild(el("div", { id: "roofline-plot", cls: "plot" }));
    if (D.roofline.off_note) s.appendChild(el("p", { cls: "note", id: "off-chart", text: D.roofline.off_note }));
    var z = section("size", "Size ceiling", "What a kernel moving B bytes can reach: the fitted line t(B) = t0 + B / BW " +
                    "per access pattern from bwprof's clean read and copy, and every row (the same filters apply).");
    z.appendChild(el("div", { id: "size-plot", cls: "plot" }));
    if (!D.size.lines.length) z.appendChild(el("p", { cls: "note", text: "No size curve in this run (an older run, or a device without one): the rows alone." }));
    controls(box);
    redraw();
  }

  // ---- dtype comparison, time breakdowns, busy/idle --------------------------------------------
  function dtypes() {
    var C = D.dtypes;
    if (!C) return;
    var s = section("dtypes", "Dtypes side by side", "Bandwidth of each " + C.per + " in each dtype (" + C.dtypes.join(", ") +
                    "); the table gives each operation's mean and the speed-up over " + C.baseline + "." + (C.note ? " " + C.note + "." : ""));
    var div = el("div", { id: "dtype-plot", cls: "plot" });
    s.appendChild(div);
    var tr = C.dtypes.map(function (d) {
      return { type: "bar", name: d, x: C.configs, y: C.gbs[d], marker: { color: C.colors[d] },
               customdata: C.time_us ? C.time_us[d].map(time) : null,
               hovertemplate: "%{x}<br>" + d + ": %{y:.4g} GB/s" + (C.time_us ? ", %{customdata}" : " (mean)") + "<extra></extra>" };
    });
    plot(div, tr, { barmode: "group", yaxis: { title: "bandwidth (GB/s)" }, xaxis: { automargin: true, tickangle: -40 },
                    height: 460, margin: { l: 70, r: 20, t: 10, b: 160 } });
    s.appendChild(table(C.table, "dtype-table"));
  }
  function breakdowns() {
    (D.breakdowns || []).forEach(function (b, j) {
      var s = section("breakdown-" + j, "Time breakdown", b.what + (b.note ? " " + b.note : ""));
      var div = el("div", { id: "breakdown-plot-" + j, cls: "plot" });
      s.appendChild(div);
      plot(div, [{ type: "bar", orientation: "h", y: b.groups.slice().reverse(), x: b.time_us.slice().reverse(),
                   marker: { color: b.colors.slice().reverse() }, customdata: b.pct.slice().reverse(),
                   hovertemplate: "%{y}: %{x:.4g} us (%{customdata:.3g} %)<extra></extra>" }],
           { xaxis: { title: "time (us)" }, yaxis: { automargin: true }, height: Math.max(220, 120 + 26 * b.groups.length),
             showlegend: false });
    });
  }
  function busy() {
    var B = D.busy;
    if (!B) return;
    var s = section("busy", "Busy and idle", B.note);
    var div = el("div", { id: "busy-plot", cls: "plot" });
    s.appendChild(div);
    var colours = ["#228833", "#ee6677", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb"];
    plot(div, B.parts.map(function (p, i) {
      return { type: "bar", orientation: "h", name: p.name, y: ["step"], x: [p.time_us], marker: { color: colours[i % colours.length] },
               hovertemplate: p.name + ": " + time(p.time_us) + " (" + sig(p.pct) + " %)<extra></extra>" };
    }), { barmode: "stack", height: 230, xaxis: { title: "time (us)" }, yaxis: { visible: false },
          legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom", traceorder: "normal" },
          margin: { l: 20, r: 20, t: 60, b: 50 } }, { now: true });
  }

  // ---- sortable tables ---------------------------------------------------------------------------
  var SHOW = 200;  // rows a table shows at first (the button shows the rest)
  function cell(v, kind) {
    if (kind === "number") return esc(v == null ? "-" : sig(v, 4));
    v = String(v);
    return v.length > 90 ? "<span title='" + esc(v).replace(/'/g, "&#39;") + "'>" + esc(v.slice(0, 88)) + "\u2026</span>" : esc(v);
  }
  function rowsOf(T) {  // the columnar table of the page's data as one array a row
    if (T.rows) return T.rows;
    var cols = T.data.map(function (c, j) { return T.kinds[j] === "number" ? c : dec(c); }), out = [];
    for (var i = 0; i < T.n; i++) out.push(cols.map(function (c) { return c[i]; }));
    return (T.rows = out);
  }
  function table(T, id) {
    rowsOf(T);
    var wrapDiv = el("div", { cls: "table-wrap" });
    var t = el("table", { cls: "sortable", id: id }), head = el("tr"), body = el("tbody");
    var order = T.rows.map(function (_, i) { return i; }), sortCol = -1, asc = true, limit = SHOW;
    T.columns.forEach(function (c, j) {
      var th = el("th", { text: c, title: "click to sort" });
      th.addEventListener("click", function () {
        asc = sortCol === j ? !asc : T.kinds[j] === "text";
        sortCol = j;
        order.sort(function (a, b) {
          var x = T.rows[a][j], y = T.rows[b][j];
          if (x == null || x === "") return 1;
          if (y == null || y === "") return -1;
          var r = T.kinds[j] === "number" ? x - y : String(x).localeCompare(String(y));
          return asc ? r : -r;
        });
        Array.prototype.forEach.call(head.children, function (h, k) {
          h.className = k === j ? (asc ? "asc" : "desc") : "";
        });
        fill();
      });
      head.appendChild(th);
    });
    var more = el("button", { type: "button", cls: "more" });
    more.addEventListener("click", function () { limit = T.rows.length; fill(); });
    function fill() {
      var html = [];
      order.slice(0, limit).forEach(function (i) {
        html.push("<tr>" + T.rows[i].map(function (v, j) {
          return "<td class='" + T.kinds[j] + "'>" + cell(v, T.kinds[j]) + "</td>";
        }).join("") + "</tr>");
      });
      body.innerHTML = html.join("");
      more.style.display = T.rows.length > limit ? "" : "none";
      more.textContent = "show all " + T.rows.length + " rows (" + limit + " shown)";
    }
    t.appendChild(el("thead", null, head));
    t.appendChild(body);
    fill();
    wrapDiv.appendChild(t);
    wrapDiv.appendChild(more);
    return wrapDiv;
  }
  function tables() {
    (D.tables || []).forEach(function (T, j) {
      var s = section("table-" + j, T.title || "Table", T.note || "Click a column's name to sort by it.");
      s.appendChild(table(T, "table-" + j + "-rows"));
    });
  }

  function main() {
    if (typeof Plotly === "undefined") throw new Error("plotly.js is missing from the page");
    hook.timing = {};
    [["header", header], ["busy", busy], ["charts", charts], ["dtypes", dtypes], ["breakdowns", breakdowns],
     ["tables", tables]].forEach(function (p) {
      var t0 = performance.now();
      p[1]();
      hook.timing[p[0]] = Math.round(performance.now() - t0);
    });
    hook.ready = true;
  }
  try { main(); } catch (e) { hook.errors.push(String(e && e.stack || e)); throw e; }
})();
