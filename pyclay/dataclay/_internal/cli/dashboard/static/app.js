// The dashboard's pages, drawn from the JSON API (/api/v1/...) with the DOM's own methods: every value
// from the cluster goes in as text, never as markup. Pages are chosen by the URL's fragment
// (#/, #/backend/ID, #/models, #/datasets, #/sessions, #/history, #/locate/QUERY), so a link to one
// survives a log-in. Charts are Chart.js (static/vendor).
"use strict";

const REFRESH_MS = 5000;
let refreshTimer = null;
let charts = [];

// ---- small helpers

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value !== undefined && value !== null) node.setAttribute(name, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function table(headings, rows, className) {
  return el("table", {class: className || ""},
    el("thead", {}, el("tr", {}, headings.map((h) => el("th", {}, h)))),
    el("tbody", {}, rows));
}

function size(bytes) {
  if (!bytes) return "-";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let n = bytes, i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i += 1; }
  return i === 0 ? `${n} B` : `${n.toFixed(1)} ${units[i]}`;
}

function when(ms) {
  return new Date(ms).toLocaleString();
}

function ms(value) {
  return value === null || value === undefined ? "-" : `${value.toFixed(2)} ms`;
}

function badge(alive) {
  return el("span", {class: alive ? "badge up" : "badge down"}, alive ? "alive" : "DOWN");
}

class LoggedOut extends Error {}

async function api(path) {
  const answer = await fetch(`/api/v1/${path}`, {credentials: "same-origin", cache: "no-store"});
  const body = await answer.json().catch(() => ({error: `HTTP ${answer.status}`}));
  if (answer.status === 401) {
    if ((body.error || "").includes("expired")) sessionStorage.setItem("dataclay-expired", "1");
    window.location.reload();
    throw new LoggedOut(body.error);
  }
  if (!answer.ok) throw new Error(body.error || `HTTP ${answer.status}`);
  return body;
}

function show(...nodes) {
  const view = document.getElementById("view");
  view.replaceChildren(...nodes);
}

function problem(error) {
  if (error instanceof LoggedOut) return;
  show(el("p", {id: "view-error", class: "error", role: "alert"}, error.message));
}

function destroyCharts() {
  for (const chart of charts) chart.destroy();
  charts = [];
}

// ---- charts of calls per second and latency

function lineChart(canvas, labels, datasets, yTitle) {
  const chart = new Chart(canvas, {
    type: "line",
    data: {labels, datasets},
    options: {
      animation: false, responsive: true, maintainAspectRatio: false, spanGaps: true,
      elements: {point: {radius: 0}},
      scales: {y: {beginAtZero: true, title: {display: true, text: yTitle}}},
      plugins: {legend: {position: "bottom"}},
    },
  });
  charts.push(chart);
  return chart;
}

function callCharts(points, title) {
  const rate = el("canvas", {"aria-label": `${title}: calls per second`, role: "img"});
  const latency = el("canvas", {"aria-label": `${title}: p50 and p99`, role: "img"});
  const box = el("section", {class: "charts"},
    el("div", {class: "card chart"}, el("h3", {}, `${title}: calls/s`), el("div", {class: "plot"}, rate)),
    el("div", {class: "card chart"}, el("h3", {}, `${title}: latency`), el("div", {class: "plot"}, latency)));
  const draw = () => {
    const labels = points.map((p) => new Date(p.at * 1000).toLocaleTimeString());
    lineChart(rate, labels, [{label: "calls/s", data: points.map((p) => p.rate), borderColor: "#2b6cb0"}],
      "calls/s");
    lineChart(latency, labels, [
      {label: "p50 (ms)", data: points.map((p) => p.p50_ms), borderColor: "#2f855a"},
      {label: "p99 (ms)", data: points.map((p) => p.p99_ms), borderColor: "#c05621"},
    ], "ms");
  };
  return {box, draw, empty: points.length === 0};
}

function chartsOrHint(points, title) {
  const charts = callCharts(points, title);
  if (charts.empty) {
    return {box: el("p", {class: "hint"}, "Call charts fill as the dashboard samples the servers (every few seconds)."),
      draw: () => {}};
  }
  return charts;
}

// ---- pages

async function overviewPage() {
  const [overview, calls] = await Promise.all([api("overview"), api("calls")]);
  const lm = overview.logic_module;
  const rows = overview.backends.map((b) => el("tr", {class: "backend", "data-backend-id": b.id},
    el("td", {}, el("a", {href: `#/backend/${encodeURIComponent(b.id)}`}, b.name)),
    el("td", {}, badge(b.alive)),
    el("td", {}, b.address),
    el("td", {}, b.engine),
    el("td", {class: "wrap"}, b.durability || "-"),
    el("td", {}, b.capacity_bytes ? `${size(b.used_bytes)} of ${size(b.capacity_bytes)}` : size(b.used_bytes)),
    el("td", {class: "number"}, b.objects === null ? "-" : b.objects),
    el("td", {class: "wrap"}, b.problem || "")));
  const charts = chartsOrHint(calls.cluster || [], "Cluster");
  show(
    el("section", {class: "totals"},
      el("div", {class: "card"}, el("h3", {}, "Logic Module"), el("p", {}, `${lm.address}, version ${lm.version}`),
        el("p", {}, lm.tls ? "TLS on" : "plaintext")),
      el("div", {class: "card"}, el("h3", {}, "Objects"), el("p", {class: "big", id: "objects-total"}, lm.objects)),
      el("div", {class: "card"}, el("h3", {}, "Aliases"), el("p", {class: "big"}, lm.aliases)),
      el("div", {class: "card"}, el("h3", {}, "Open sessions"), el("p", {class: "big"}, lm.sessions)),
      el("div", {class: "card"}, el("h3", {}, "Collected by GC"), el("p", {class: "big"}, lm.collected))),
    el("h2", {}, `Backends (${overview.backends.length})`),
    table(["Name", "Liveness", "Address", "Engine", "Durability", "Pool use", "Objects", ""], rows, "backends"),
    el("h2", {}, "Calls"),
    charts.box);
  charts.draw();
}

async function backendPage(id) {
  const [b, calls] = await Promise.all([api(`backends/${encodeURIComponent(id)}`), api("calls")]);
  const rpcs = b.rpcs.map((r) => el("tr", {},
    el("td", {}, r.rpc), el("td", {class: "number"}, r.started), el("td", {class: "number"}, r.ended),
    el("td", {class: "number"}, ms(r.mean_ms)), el("td", {class: "number"}, ms(r.p50_ms)),
    el("td", {class: "number"}, ms(r.p99_ms))));
  const processes = b.processes.map((p) => el("tr", {},
    el("td", {}, p.language), el("td", {}, p.account), el("td", {class: "number"}, p.pid), el("td", {}, badge(p.alive)),
    el("td", {class: "number"}, p.calls), el("td", {class: "number"}, p.in_flight),
    el("td", {class: "number"}, p.restarts), el("td", {class: "wrap"}, p.confinement)));
  const charts = chartsOrHint(calls[b.name] || [], b.name);
  show(
    el("h2", {id: "backend-name"}, b.name, " ", badge(b.alive)),
    el("dl", {class: "facts"},
      el("dt", {}, "ID"), el("dd", {}, b.id),
      el("dt", {}, "Address"), el("dd", {}, b.address),
      el("dt", {}, "Engine"), el("dd", {}, b.engine),
      el("dt", {}, "Durability"), el("dd", {}, b.durability || "-"),
      el("dt", {}, "Pool"), el("dd", {}, b.capacity_bytes ? `${size(b.used_bytes)} of ${size(b.capacity_bytes)}`
        : size(b.used_bytes)),
      el("dt", {}, "Objects"), el("dd", {}, b.objects === null ? "-" : `${b.objects} (${b.collected} collected)`),
      el("dt", {}, "Encrypted at rest"), el("dd", {}, b.encrypted ? "yes" : "no")),
    b.problem ? el("p", {class: "error"}, b.problem) : null,
    el("h3", {}, "Execution environments"),
    el("ul", {}, b.environments.map((line) => el("li", {}, line))),
    processes.length ? table(["Language", "Account", "PID", "State", "Calls", "Running", "Restarts", "Confinement"],
      processes) : null,
    charts.box,
    el("h3", {}, "Calls by RPC since the backend started"),
    table(["RPC", "Started", "Ended", "Mean", "p50", "p99"], rpcs, "rpcs"));
  charts.draw();
}

async function modelsPage() {
  const models = await api("models");
  show(el("h2", {}, `Models (${models.length})`),
    models.length ? table(["Namespace", "Language", "Owner", "Classes", "Files", "Version", "State"],
      models.map((m) => el("tr", {}, el("td", {}, m.namespace), el("td", {}, m.language), el("td", {}, m.owner),
        el("td", {class: "number"}, m.classes), el("td", {class: "number"}, m.files),
        el("td", {class: "number"}, m.version), el("td", {}, m.state)))) : el("p", {class: "hint"}, "No model is registered."));
}

async function datasetsPage() {
  const listing = await api("datasets");
  show(el("h2", {}, `Datasets (${listing.datasets.length}${listing.complete ? "" : "+"})`),
    table(["Dataset", "Owner", "Objects"], listing.datasets.map((d) => el("tr", {},
      el("td", {}, d.name), el("td", {}, d.owner), el("td", {class: "number"}, d.objects < 0 ? "-" : d.objects)))));
}

async function sessionsPage() {
  const sessions = await api("sessions");
  show(el("h2", {}, `Open sessions (${sessions.open})`),
    table(["Account", "Sessions"], sessions.by_account.map((s) => el("tr", {},
      el("td", {}, s.account), el("td", {class: "number"}, s.sessions)))));
}

const EVENT_NAMES = {
  "gc": "garbage collection", "backend-silent": "backend silent", "backend-back": "backend back",
  "promoted": "replicas promoted", "replicas-restored": "replicas restored",
};

async function historyPage() {
  const [events, overview] = await Promise.all([api("events"), api("overview")]);
  const names = Object.fromEntries(overview.backends.map((b) => [b.id, b.name]));
  show(el("h2", {}, "Garbage collection and failover"),
    el("p", {class: "hint"}, "Since the Logic Module started; newest first."),
    events.length ? table(["When", "What", "Backend", "Objects", "Term", "Detail"], events.map((e) => el("tr",
      {class: `event ${e.kind}`}, el("td", {}, when(e.at_ms)), el("td", {}, EVENT_NAMES[e.kind] || e.kind),
      el("td", {}, e.backend_id ? (names[e.backend_id] || e.backend_id) : "-"), el("td", {class: "number"}, e.objects),
      el("td", {class: "number"}, e.term || "-"), el("td", {class: "wrap"}, e.detail))), "events")
      : el("p", {class: "hint"}, "Nothing yet."));
}

function where(place) {
  return el("span", {}, place.name, " ", el("span", {class: "hint"}, place.address), " ", badge(place.alive));
}

async function locatePage(query) {
  document.getElementById("search-box").value = query;
  let found;
  try {
    found = await api(`locate?q=${encodeURIComponent(query)}`);
  } catch (error) {
    if (error instanceof LoggedOut) return;
    show(el("h2", {}, `Search: ${query}`), el("p", {id: "locate-error", class: "error", role: "alert"}, error.message));
    return;
  }
  show(el("h2", {}, `Search: ${query}`), el("div", {id: "locate-result"}, found.objects.map((o) =>
    el("section", {class: "card object", "data-object-id": o.id},
      el("h3", {}, o.class_name, " ", el("span", {class: "hint"}, `(${o.language})`)),
      el("dl", {class: "facts"},
        el("dt", {}, "Object ID"), el("dd", {class: "object-id"}, o.id),
        el("dt", {}, "Dataset"), el("dd", {}, o.dataset),
        el("dt", {}, "Aliases"), el("dd", {}, o.aliases.join(", ") || "-"),
        el("dt", {}, "Master copy"), el("dd", {class: "master"}, where(o.master)),
        el("dt", {}, "Replicas"), el("dd", {class: "replicas"}, o.replicas.length
          ? o.replicas.map((r) => el("div", {}, where(r))) : "none"),
        el("dt", {}, "Version of"), el("dd", {}, o.version_of
          ? el("a", {href: `#/locate/${encodeURIComponent(o.version_of)}`}, o.version_of) : "-"),
        el("dt", {}, "Versions"), el("dd", {class: "versions"}, o.versions.length
          ? o.versions.map((v) => el("div", {}, el("a", {href: `#/locate/${encodeURIComponent(v.id)}`}, v.id),
            " on ", v.master.name)).concat(o.more_versions ? [el("div", {class: "hint"}, "and more")] : [])
          : "none"))))));
}

// ---- routing

async function route() {
  clearTimeout(refreshTimer);
  destroyCharts();
  const hash = decodeURIComponent(window.location.hash.replace(/^#\/?/, ""));
  const [page, ...rest] = hash.split("/");
  const argument = rest.join("/");
  const pages = {
    "": overviewPage, "backend": () => backendPage(argument), "models": modelsPage, "datasets": datasetsPage,
    "sessions": sessionsPage, "history": historyPage, "locate": () => locatePage(argument),
  };
  const draw = pages[page];
  if (!draw) {
    show(el("p", {id: "view-error", class: "error"}, `No such page: #/${hash}`));
    return;
  }
  try {
    await draw();
  } catch (error) {
    problem(error);
  }
  if (page === "" || page === "backend") {
    refreshTimer = setTimeout(route, REFRESH_MS);   // a new page (hashchange) clears it first
  }
}

document.addEventListener("DOMContentLoaded", async () => {
  document.getElementById("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const query = document.getElementById("search-box").value.trim();
    if (query) window.location.hash = `#/locate/${encodeURIComponent(query)}`;
  });
  document.getElementById("logout").addEventListener("click", async () => {
    await fetch("/api/v1/logout", {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}",
      credentials: "same-origin"});
    window.location.hash = "";
    window.location.reload();
  });
  window.addEventListener("hashchange", route);
  try {
    const me = await api("whoami");
    document.getElementById("who").textContent = me.user;
  } catch (error) {
    if (error instanceof LoggedOut) return;
  }
  route();
});
