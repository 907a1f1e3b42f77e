// Draws the page's charts: each canvas whose id is a key of the JSON island
// #chart-data becomes a Chart.js chart. Served from the package; no inline script.
(function () {
  "use strict";
  var PALETTE = ["#2f6fdf", "#d9622b", "#2b9d6f", "#8a4fd1", "#c23c6b", "#6b7a8f"];

  function options(spec) {
    var line = spec.type === "line";
    return {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      parsing: line ? false : true,
      plugins: { legend: { display: spec.datasets.length > 1 } },
      scales: {
        x: {
          type: line ? "linear" : "category",
          title: { display: !!spec.x, text: spec.x || "" },
        },
        y: {
          beginAtZero: !line,
          title: { display: !!spec.y, text: spec.y || "" },
          ticks: line ? {} : { precision: 0 },
        },
      },
    };
  }

  function datasets(spec) {
    return spec.datasets.map(function (set, i) {
      var colour = PALETTE[i % PALETTE.length];
      var data = spec.type === "line"
        ? set.data.map(function (p) { return { x: p[0], y: p[1] }; })
        : set.data;
      return {
        label: set.label,
        data: data,
        borderColor: colour,
        backgroundColor: spec.type === "line" ? colour : colour + "cc",
        borderWidth: spec.type === "line" ? 2 : 1,
        pointRadius: spec.type === "line" && data.length > 60 ? 0 : 2,
      };
    });
  }

  function draw() {
    var island = document.getElementById("chart-data");
    if (!island || typeof window.Chart === "undefined") {
      return;
    }
    var charts = JSON.parse(island.textContent);
    Object.keys(charts).forEach(function (id) {
      var canvas = document.getElementById(id);
      if (!canvas) {
        return;
      }
      var spec = charts[id];
      var chart = new window.Chart(canvas, {
        type: spec.type,
        data: { labels: spec.labels || [], datasets: datasets(spec) },
        options: options(spec),
      });
      canvas.setAttribute("data-ready", "1");
      canvas.setAttribute("data-series", String(chart.data.datasets.length));
    });
    document.body.setAttribute("data-charts-ready", "1");
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else {
    draw();
  }
})();
