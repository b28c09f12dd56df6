// Draws the dashboard's (and the replay report's) charts with the vendored Chart.js, from the JSON the page
// carries in <script type="application/json" id="chart-data">. Never evaluates page text.
(function () {
  "use strict";
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
    draw("chart-label-counts", { type: "bar", data: { labels: data.label_counts.map(function (x) { return x[0]; }),
      datasets: [{ label: "issues", data: data.label_counts.map(function (x) { return x[1]; }),
        backgroundColor: palette[0] }] },
      options: Object.assign({}, common, { indexAxis: "y", plugins: { legend: { display: false } },
        scales: { x: { beginAtZero: true, ticks: { precision: 0 } } } }) });
  }
})();
