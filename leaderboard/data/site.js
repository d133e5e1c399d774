// gpu2tpu leaderboard page: reads the JSON embedded in index.html; drill-down data per agent is
// loaded on demand from details/strings.js and details/a<N>.js with <script> tags (works from
// file://, no fetch).
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("lb-data").textContent);
  const $ = (s) => document.querySelector(s);
  const el = (tag, attrs, ...kids) => {
    const n = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") n.className = v; else if (k === "text") n.textContent = v; else n.setAttribute(k, v);
    }
    for (const k of kids) n.append(k);
    return n;
  };
  const pct = (v) => (v == null ? "–" : (100 * v).toFixed(1) + "%");
  const usd = (v) => (v == null ? "–" : v === 0 ? "$0" : "$" + (v < 1 ? v.toFixed(4) : v.toFixed(2)));
  const num = (v, d) => (v == null ? "–" : Number(v).toFixed(d));
  const COLUMNS = [
    { key: "rank", label: "Rank", fmt: (v) => (v == null ? "–" : v) },
    { key: "agent", label: "Agent", text: true },
    { key: "model", label: "Model", text: true },
    { key: "trust", label: "Results", text: true, badge: true },
    { key: "migrated_rate", label: "Migrated", fmt: pct },
    ...D.criteria.map((c) => ({ key: c.name + "_rate", label: c.title, fmt: pct })),
    { key: "silent_share", label: "Silent failures", fmt: pct },
    { key: "overclaim", label: "Overclaimed", fmt: pct },
    { key: "usd_per_task", label: "Cost per task", fmt: usd },
    { key: "median_speed_ratio", label: "Speed vs reference", fmt: (v) => (v == null ? "–" : num(v, 2) + "×") },
    { key: "tasks", label: "Tasks", fmt: (v) => v },
    { key: "evaluations", label: "Runs", fmt: (v) => v },
  ];
  // ranked (verified) entries first; a page with none opens on everything, marked self-reported
  const verified = D.agents.some((a) => a.trust === "verified");
  const state = { sort: "rank", dir: 1, q: "", trust: verified || !D.agents.length ? "verified" : "all" };

  function rows() {
    const q = state.q.toLowerCase();
    const out = D.agents.filter((a) => (state.trust === "all" || a.trust === state.trust) &&
      (!q || (a.agent + " " + (a.model || "")).toLowerCase().includes(q)));
    const col = COLUMNS.find((c) => c.key === state.sort);
    out.sort((a, b) => {
      const x = a[state.sort], y = b[state.sort];
      if (x == null && y == null) return 0;
      if (x == null) return 1;
      if (y == null) return -1;
      return (col.text ? String(x).localeCompare(String(y)) : x - y) * state.dir;
    });
    return out;
  }

  function renderRanking() {
    const head = el("tr");
    for (const c of COLUMNS) {
      const th = el("th", { "data-key": c.key, scope: "col", text: c.label });
      if (state.sort === c.key) th.setAttribute("aria-sort", state.dir > 0 ? "ascending" : "descending");
      th.onclick = () => {
        state.dir = state.sort === c.key ? -state.dir : (c.text || c.key === "rank" ? 1 : -1);
        state.sort = c.key;
        renderRanking();
      };
      head.append(th);
    }
    const body = el("tbody");
    for (const a of rows()) {
      const tr = el("tr", { "data-agent": a.agent, "data-trust": a.trust });
      for (const c of COLUMNS) {
        const v = a[c.key];
        const td = el("td", { class: c.text ? "" : "num", "data-key": c.key });
        if (c.badge) td.append(el("span", { class: "badge " + v, text: v }));
        else td.textContent = c.text ? (v == null ? "–" : v) : c.fmt(v);
        tr.append(td);
      }
      tr.onclick = () => openAgent(a);
      body.append(tr);
    }
    const table = $("#ranking");
    table.replaceChildren(el("thead", {}, head), body);
    $("#count").textContent = body.children.length + " of " + D.agents.length + " entries";
    // say what the Results choice hides (the README demo's store holds only self-reported runs)
    const hidden = state.trust === "all" ? [] : D.agents.filter((a) => a.trust !== state.trust);
    const kinds = [...new Set(hidden.map((a) => a.trust))].join(" and ");
    $("#hidden").textContent = hidden.length ? `${hidden.length} ${kinds} ${hidden.length === 1 ? "entry" : "entries"} ` +
      `hidden: choose Results "all" (or "${kinds}") to see ${hidden.length === 1 ? "it" : "them"}` : "";
  }
  function trustNote() {  // no verified entry: say that none is ranked, and why
    const note = $("#trust-note");
    note.hidden = verified || !D.agents.length;
    note.textContent = note.hidden ? "" : `No verified results yet: all ${D.agents.length} ` +
      `${D.agents.length === 1 ? "entry is" : "entries are"} self-reported (graded by the submitter, ` +
      `not re-executed by the maintainers), so none is ranked.`;
  }

  // ---- plots (inline SVG and canvas; no libraries) ----
  const SVGNS = "http://www.w3.org/2000/svg";
  const svg = (tag, attrs) => {
    const n = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v);
    return n;
  };
  function scatter() {
    const pts = D.agents.filter((a) => a.migrated_rate != null && a.usd_per_task != null);
    if (!pts.some((a) => a.usd_per_task > 0)) {  // no cost axis to draw: say so in words
      $("#plot-scatter").append(el("p", { class: "note", id: "scatter-none", text: pts.length
        ? "Every entry here cost $0 per task (agent and execution cost together; the practice " +
          "target xla-cpu is priced at zero), so there is no cost axis to plot: the migrated " +
          "rates are in the ranking above."
        : "No entry has a migrated rate and a cost yet: nothing to plot." }));
      return;
    }
    const W = 520, H = 300, L = 50, B = 36;
    const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: "100%", role: "img", id: "scatter-svg",
      "aria-label": "migrated rate against cost per task" });
    const maxX = Math.max(1e-9, ...pts.map((a) => a.usd_per_task)) * 1.05;
    const x = (v) => L + (W - L - 10) * (v / maxX), y = (v) => H - B - (H - B - 10) * v;
    s.append(svg("line", { x1: L, y1: H - B, x2: W - 10, y2: H - B, stroke: "#999" }));
    s.append(svg("line", { x1: L, y1: 10, x2: L, y2: H - B, stroke: "#999" }));
    for (const t of [0, 0.25, 0.5, 0.75, 1]) {
      const lab = svg("text", { x: L - 6, y: y(t) + 4, "text-anchor": "end" });
      lab.textContent = Math.round(t * 100) + "%";
      s.append(lab);
    }
    for (const t of [0, 0.5, 1]) {  // the last label ends at the axis's end: never cut off
      const lab = svg("text", { x: x(t * maxX), y: H - B + 16, "text-anchor": t === 1 ? "end" : "middle" });
      lab.textContent = usd(t * maxX);
      s.append(lab);
    }
    const xl = svg("text", { x: (W + L) / 2, y: H - 4, "text-anchor": "middle" });
    xl.textContent = "cost per task (agent + execution, USD)";
    s.append(xl);
    for (const a of pts) {
      const c = svg("circle", { cx: x(a.usd_per_task), cy: y(a.migrated_rate), r: 5,
        fill: a.trust === "verified" ? "#1a73e8" : "none", stroke: a.trust === "verified" ? "#fff" : "#b06000",
        "class": "point", "data-agent": a.agent });
      const tip = svg("title", {});
      tip.textContent = `${a.agent} (${a.trust}): ${pct(a.migrated_rate)} migrated, ${usd(a.usd_per_task)} per task`;
      c.append(tip);
      s.append(c);
    }
    $("#plot-scatter").append(s);
  }
  function categoryBars() {
    const agents = D.agents.filter((a) => D.failures[a.i]).slice(0, 40);
    const cats = D.categories;
    const rowH = 16, L = 150, W = 520, H = agents.length * rowH + 10;
    const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: "100%", id: "failures-svg" });
    agents.forEach((a, r) => {
      const counts = D.failures[a.i];
      const total = Object.values(counts).reduce((p, q) => p + q, 0) || 1;
      const lab = svg("text", { x: L - 6, y: r * rowH + 12, "text-anchor": "end" });
      lab.textContent = a.agent.length > 24 ? a.agent.slice(0, 23) + "…" : a.agent;
      s.append(lab);
      let x0 = L;
      for (const cat of cats) {
        if (!counts[cat]) continue;
        const w = (W - L - 10) * counts[cat] / total;
        const rect = svg("rect", { x: x0, y: r * rowH + 2, width: w, height: rowH - 4, fill: D.colors[cat] });
        const tip = svg("title", {});
        tip.textContent = `${a.agent}: ${cat} ${counts[cat]}`;
        rect.append(tip);
        s.append(rect);
        x0 += w;
      }
    });
    $("#plot-failures").append(s, legend(cats));
  }
  function legend(keys) {
    const box = el("div", { class: "legend" });
    for (const k of keys) box.append(el("span", {}, el("i", { style: "background:" + D.colors[k] }), k));
    return box;
  }
  function grid() {
    const keys = D.grid_keys, tasks = D.tasks;
    const agents = D.agents.filter((a) => D.grid[a.i]);
    // cells never smaller than a label's line: a wide grid scrolls sideways (#grid-wrap)
    const cell = Math.max(11, Math.min(14, Math.floor(900 / Math.max(1, tasks.length))));
    const L = 150, font = "11px system-ui, sans-serif";
    const short = (t) => (t.length > 36 ? t.slice(0, 35) + "…" : t);
    const cv = el("canvas", { id: "grid-canvas", role: "img",
      "aria-label": `verdicts of ${agents.length} agents (rows) on ${tasks.length} tasks (columns)` });
    let g = cv.getContext("2d");
    g.font = font;
    // the column labels (task ids) stand upright above the cells: T pixels of header
    const T = 8 + Math.ceil(Math.max(0, ...tasks.map((t) => g.measureText(short(t)).width)));
    cv.width = L + tasks.length * cell + 4;
    cv.height = T + agents.length * cell + 2;
    g = cv.getContext("2d");  // resizing reset the context's state
    g.font = font;
    g.fillStyle = "#444";
    tasks.forEach((t, c) => {
      g.save();
      g.translate(L + c * cell + cell / 2 + 4, T - 4);
      g.rotate(-Math.PI / 2);
      g.textAlign = "left";
      g.fillText(short(t), 0, 0);
      g.restore();
    });
    g.textAlign = "right";
    agents.forEach((a, r) => {
      g.fillStyle = "#444";
      g.fillText(a.agent.length > 22 ? a.agent.slice(0, 21) + "…" : a.agent, L - 4, T + r * cell + cell - 2);
      const codes = D.grid[a.i];
      for (let t = 0; t < tasks.length; t++) {
        const k = keys[codes.charCodeAt(t) - 48];
        if (!k) continue;
        g.fillStyle = D.colors[k];
        g.fillRect(L + t * cell, T + r * cell, cell - 1, cell - 1);
      }
    });
    const cellAt = (e) => {
      const b = cv.getBoundingClientRect();
      const x = (e.clientX - b.left) * cv.width / b.width, y = (e.clientY - b.top) * cv.height / b.height;
      const t = Math.floor((x - L) / cell);
      return [y < T ? null : agents[Math.floor((y - T) / cell)], t >= 0 && t < tasks.length ? t : -1];
    };
    cv.onclick = (e) => {
      const [a, t] = cellAt(e);
      if (a && t >= 0) openAgent(a, tasks[t]);
    };
    cv.onmousemove = (e) => {
      const [a, t] = cellAt(e);
      cv.title = t < 0 ? "" : a ? `${a.agent} × ${tasks[t]}: ${keys[D.grid[a.i].charCodeAt(t) - 48] || "not run"} (click to open)`
        : tasks[t];
    };
    $("#grid-wrap").append(cv);
    $("#plot-grid").append(legend(keys.filter(Boolean)));
  }

  // ---- drill-down ----
  // details/strings.js (evidence entries agents share) and details/a<N>.js (one agent, columnar;
  // leaderboard/site_details.py writes both and says how): decoded here into one object per run
  const FORMAT = 1;
  const loaded = {};
  let shared = null;
  const formatError = (what, f) => { throw new Error(`${what} has format ${f}, this page reads ${FORMAT}: write the folder again with gpu2tpu leaderboard site`); };
  window.LB_STRINGS = (f, entries) => { if (f !== FORMAT) formatError("details/strings.js", f); shared = entries; };
  window.LB_DETAIL = (i, f, d) => { if (f !== FORMAT) formatError(`details/a${i}.js`, f); loaded[i] = decode(d); };
  const TRISTATE = ["migrated", "silent", "claimed", "reported_migrated", "verdict_changed"];
  function decode(d) {
    const entries = shared.concat(d.local);
    const at = (c, n) => (Array.isArray(c) ? c[n] : c);
    const evals = [];
    for (let n = 0; n < d.n; n++) {
      const e = { id: typeof d.id === "string" ? d.id.slice(16 * n, 16 * n + 16) : d.id[n], links: d.links[n] || {} };
      for (const [k, c] of Object.entries(d.cols)) e[k] = at(c, n);
      for (const k of ["task", "trust", "category", "price_version", "goal_metric", "references", "absent"]) e[k] = d.words[e[k]];
      const bits = e.flags;
      TRISTATE.forEach((k, b) => { const v = (bits >> (2 * b)) & 3; e[k] = v === 0 ? null : v === 2; });
      e.crit = D.criteria.map((_, c) => Boolean((bits >> (2 * TRISTATE.length + c)) & 1));
      e.ev = [];
      const flat = d.ev[n];
      for (let p = 0; p < flat.length;) {
        const [crit, ok, source, pieces] = entries[flat[p++]];
        let text = pieces[0];
        for (let s = 1; s < pieces.length; s++) text += String(flat[p++]) + pieces[s];
        e.ev.push([crit, ok, text, source]);
      }
      evals.push(e);
    }
    return evals;
  }
  function loadScript(src, done) {
    const s = el("script", { src });
    s.onload = () => done(true);
    s.onerror = () => done(false);
    document.body.append(s);
  }
  function loadAgent(a, done) {
    if (loaded[a.i]) return done(loaded[a.i]);
    const agent = () => loadScript("details/a" + a.i + ".js", (ok) => done(ok ? loaded[a.i] || [] : null));
    if (shared) return agent();
    loadScript("details/strings.js", (ok) => (ok && shared ? agent() : done(null)));
  }
  function openAgent(a, task) {
    const box = $("#detail");
    box.hidden = false;
    box.replaceChildren(el("h2", { text: a.agent + (a.model ? " · " + a.model : "") }),
      el("p", { class: "note", text: "loading runs…" }));
    loadAgent(a, (evals) => {
      if (!evals) { box.lastChild.textContent = "this agent's runs are not in this folder"; return; }
      const list = task ? evals.filter((e) => e.task === task) : evals;
      const t = el("table", { id: "evals" });
      const head = el("tr");
      for (const h of ["Task", "Attempt", "Results", "Verdict", ...D.criteria.map((c) => c.title), "Claimed"]) head.append(el("th", { text: h }));
      const body = el("tbody");
      for (const e of list) {
        const tr = el("tr", { "data-eval": e.id });
        tr.append(el("td", { text: e.task }), el("td", { class: "num", text: e.attempt }),
          el("td", {}, el("span", { class: "badge " + e.trust, text: e.trust })),
          el("td", { class: e.migrated ? "pass" : "fail", text: e.migrated ? "migrated" : e.category || "failed" }));
        e.crit.forEach((p) => tr.append(el("td", { class: p ? "pass" : "fail", text: p ? "pass" : "fail" })));
        tr.append(el("td", { text: e.claimed == null ? "–" : e.claimed ? "success" : "failure" }));
        tr.onclick = () => openEval(a, e);
        body.append(tr);
      }
      t.append(el("thead", {}, head), body);
      box.replaceChildren(el("h2", { text: a.agent + (a.model ? " · " + a.model : "") }),
        el("p", { class: "note", text: list.length + " runs" + (task ? " of " + task : "") + "; click one for its evidence" }),
        el("div", { class: "tablewrap" }, t), el("div", { id: "eval-detail" }));
      box.scrollIntoView();
      if (list.length === 1) openEval(a, list[0]);
    });
  }
  function openEval(a, e) {
    const box = $("#eval-detail");
    const facts = el("dl", { class: "facts" });
    const fact = (k, v) => facts.append(el("dt", { text: k }), el("dd", { text: v }));
    fact("Claimed by the agent", e.claimed == null ? "no claim" : e.claimed ? "success" : "failure");
    fact("Outcome in report.json", e.reported_migrated == null ? "–" : e.reported_migrated ? "migrated" : "not migrated");
    fact("Verified outcome", e.migrated ? "migrated" : (e.category || "failed") + (e.silent ? " (silent: exit 0)" : ""));
    fact("Re-score changed report.json", e.verdict_changed ? "yes" : "no");
    fact("Agent cost", usd(e.agent_usd));
    fact("Execution cost", usd(e.exec_usd) + (e.chip_s == null ? "" : ` (${num(e.chip_s, 1)} chip-seconds, prices ${e.price_version || "–"})`));
    fact("Step time", e.step_ms == null ? "–" : `${num(e.step_ms, 1)} ms (reference ${e.ref_step_ms == null ? "–" : num(e.ref_step_ms, 1) + " ms"})`);
    fact("Compilations", e.compiles == null ? "–" : e.compiles);
    fact("References", { maintainer: "run by the maintainers", published: "match the published hashes",
      unpublished: "not published: built by the submitter" }[e.references] || "–");
    fact("Goal", e.goal == null ? "–" : `${e.goal_metric} = ${num(e.goal, 4)}`);
    fact("Evidence files", e.absent == null ? "–" : e.absent.length
      ? "recorded before the harness kept " + e.absent.join(", ") : "every one this harness keeps");
    const links = el("p", { class: "links" });
    for (const [name, href] of Object.entries(e.links || {})) links.append(el("a", { href, text: name }), " ");
    if (!links.children.length) links.textContent = "files: not published with this page";
    const crits = D.criteria.map((c, ci) => {
      const lines = e.ev.filter((x) => x[0] === ci);
      const ul = el("ul");
      for (const [, ok, text, source] of lines) {
        // where the line's evidence came from (in-process, supervisor, static-scan), said once
        const said = source && text.startsWith(`source: ${source}: `) ? text.slice(source.length + 10) : text;
        const li = el("li", { class: ok === false ? "bad" : "" });
        if (source) li.append(el("span", { class: "src", text: source }), " ");
        li.append(said);
        ul.append(li);
      }
      return el("div", { class: "crit " + (e.crit[ci] ? "ok" : "bad"), "data-criterion": c.name },
        el("h3", { text: `${c.title}: ${e.crit[ci] ? "pass" : "fail"}` }), ul);
    });
    box.replaceChildren(el("h3", { text: `${e.task}, attempt ${e.attempt}` }), facts, links, ...crits);
  }

  // ---- provenance ----
  function provenance() {
    const m = D.meta;
    $("#prov").textContent = `harness ${m.harness.join(", ") || "–"} · corpus ${m.corpus.join(", ") || "–"} · ` +
      `schema v${m.schema} · ${m.evaluations} runs (${m.verified} verified, ${m.self_reported} self-reported) · generated ${m.generated}`;
    const t = el("table", { id: "prices" });
    t.append(el("thead", {}, el("tr", {}, ...["Price version", "Accelerator", "USD per chip-hour", "Source", "Read on"].map((h) => el("th", { text: h })))));
    const b = el("tbody");
    for (const p of m.prices) {
      const src = el("td");
      const url = /^https?:\/\//.test(p.source_url || "") ? p.source_url : null;  // no javascript: links
      src.append(url ? el("a", { href: url, text: url }) : p.source_url || "–");
      b.append(el("tr", {}, el("td", { text: p.price_version }), el("td", { text: p.accelerator }),
        el("td", { class: "num", text: p.usd_per_chip_hour }), src, el("td", { text: p.retrieved_on })));
    }
    t.append(b);
    $("#price-table").append(t);
  }

  $("#q").oninput = (ev) => { state.q = ev.target.value; renderRanking(); };
  $("#trust").onchange = (ev) => { state.trust = ev.target.value; renderRanking(); };
  $("#trust").value = state.trust;
  trustNote();
  renderRanking();
  scatter();
  categoryBars();
  grid();
  provenance();
  document.body.setAttribute("data-ready", "1");
})();
