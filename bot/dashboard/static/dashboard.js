// The dashboard's (and the replay report's) small scripts. Never evaluates page text.
//  * charts: drawn with the vendored Chart.js from the JSON the page carries in <script type="application/json"
//    id="chart-data">;
//  * table.sortable: a button in each header sorts the rows (numbers for th.n columns, else text);
//  * the catalog's search box and label filter hide the rows that do not match, as the server does for ?q=&label=.
(function () {
  "use strict";

  function charts() {
    var node = document.getElementById("chart-data");
    if (!node || typeof Chart === "undefined") { return; }
    var data = JSON.parse(node.textContent);
    var palette = ["#2f5bd3", "#1f8a4c", "#b7791f", "#c53030", "#6b3fb4", "#0f8ea5", "#d1478c", "#5d6778"];
    var common = { responsive: true, maintainAspectRatio: false, animation: false,
                   plugins: { legend: { position: "bottom", labels: { boxWidth: 12 } } } };

    function draw(id, config) {
      var canvas = document.getElementById(id);
      if (canvas) { new Chart(canvas, config); }
    }

    if (data.triaged) {
      draw("chart-triaged", { type: "bar", data: { labels: data.days, datasets: [
        { label: "issues", data: data.triaged, backgroundColor: palette[0] }] },
        options: Object.assign({}, common, { plugins: { legend: { display: false } },
          scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } }) });
    }
    if (data.labels) {
      draw("chart-labels", { type: "bar", data: { labels: data.days, datasets: data.labels.map(function (s, i) {
        return { label: s.label, data: s.data, backgroundColor: palette[i % palette.length] }; }) },
        options: Object.assign({}, common, { scales: { x: { stacked: true },
          y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } } }) });
    }
    if (data.label_counts) {
      // a horizontal bar per label, each tall enough to carry its name (Chart.js skips names that do not fit)
      var box = document.getElementById("chart-label-counts");
      if (box && box.parentNode.classList.contains("grows")) {
        box.parentNode.style.height = Math.max(160, 22 * data.label_counts.length + 40) + "px";
      }
      draw("chart-label-counts", { type: "bar", data: { labels: data.label_counts.map(function (x) { return x[0]; }),
        datasets: [{ label: "issues", data: data.label_counts.map(function (x) { return x[1]; }),
          backgroundColor: palette[0] }] },
        options: Object.assign({}, common, { indexAxis: "y", plugins: { legend: { display: false } },
          scales: { x: { beginAtZero: true, ticks: { precision: 0 } },
                    y: { ticks: { autoSkip: false } } } }) });
    }
  }

  function cellKey(cell, numeric) {
    var text = cell ? (cell.getAttribute("data-sort") || cell.textContent).trim() : "";
    if (!numeric) { return text.toLowerCase(); }
    var n = parseFloat(text.replace(/[%,\s]/g, ""));
    return isNaN(n) ? -Infinity : n;
  }

  function sortable(table) {
    var head = table.tHead && table.tHead.rows[0];
    var body = table.tBodies[0];
    if (!head || !body) { return; }
    Array.prototype.forEach.call(head.cells, function (th, col) {
      var label = th.textContent.trim();
      if (!label) { return; }
      var numeric = th.classList.contains("n");
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      button.textContent = label;
      button.title = "Sort by " + label;
      th.textContent = "";
      th.appendChild(button);
      button.addEventListener("click", function () {
        // numbers sort largest first on the first click, text A to Z; a second click reverses
        var current = th.getAttribute("aria-sort");
        var descending = current ? current === "ascending" : numeric;
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = cellKey(a.cells[col], numeric), y = cellKey(b.cells[col], numeric);
          var order = x < y ? -1 : x > y ? 1 : 0;
          return descending ? -order : order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
        Array.prototype.forEach.call(head.cells, function (other) { other.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", descending ? "descending" : "ascending");
      });
    });
  }

  function catalogFilter() {
    var form = document.getElementById("catalog-filter");
    var table = document.getElementById("catalog");
    if (!form || !table) { return; }
    var q = form.elements.q, label = form.elements.label, count = document.getElementById("catalog-count");
    function apply() {
      var words = q.value.toLowerCase().split(/\s+/).filter(Boolean);
      var wanted = label.value, shown = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var text = row.getAttribute("data-search") || "";
        var labels = (row.getAttribute("data-labels") || "").split(" ");
        var ok = words.every(function (w) { return text.indexOf(w) >= 0; }) &&
                 (!wanted || labels.indexOf(wanted) >= 0);
        row.hidden = !ok;
        if (ok) { shown += 1; }
      });
      if (count) { count.textContent = String(shown); }
    }
    q.addEventListener("input", apply);
    label.addEventListener("change", apply);
  }

  charts();
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), sortable);
  catalogFilter();
})();
