/* The Overview's charts, drawn with the vendored Chart.js from the page's own JSON endpoint
   (data-overview-src). A static file: the CSP allows no inline script. The tables beside each
   chart carry the same numbers, so nothing is lost when this does not run. */
(function () {
  "use strict";

  var COLOURS = ["#2557a7", "#b3541e", "#2e7d32", "#6a1b9a", "#00838f", "#ad1457", "#5d4037"];

  function draw(root, data) {
    if (typeof window.Chart === "undefined") return;
    var Chart = window.Chart;
    var days = root.querySelector("[data-chart='days']");
    if (days) {
      new Chart(days, {
        type: "line",
        data: {
          labels: data.days.map(function (d) { return d.day.slice(5); }),
          datasets: [
            { label: "Memories recorded", data: data.days.map(function (d) { return d.memories; }),
              borderColor: COLOURS[0], backgroundColor: COLOURS[0], type: "bar" },
            { label: "Saves", data: data.days.map(function (d) { return d.saves; }),
              borderColor: COLOURS[1], backgroundColor: COLOURS[1], type: "bar" },
            { label: "Active memories", data: data.days.map(function (d) { return d.active; }),
              borderColor: COLOURS[2], backgroundColor: COLOURS[2], tension: 0.2 }
          ]
        },
        options: { responsive: true, maintainAspectRatio: false, animation: false,
                   scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } }
      });
    }
    var kinds = root.querySelector("[data-chart='kinds']");
    if (kinds) {
      new Chart(kinds, {
        type: "doughnut",
        data: {
          labels: data.kinds.map(function (k) { return k.label; }),
          datasets: [{ data: data.kinds.map(function (k) { return k.memories; }), backgroundColor: COLOURS }]
        },
        options: { responsive: true, maintainAspectRatio: false, animation: false }
      });
    }
    var agents = root.querySelector("[data-chart='agents']");
    if (agents) {
      new Chart(agents, {
        type: "bar",
        data: {
          labels: data.agents.map(function (a) { return a.agent; }),
          datasets: [{ label: "Memories", data: data.agents.map(function (a) { return a.memories; }),
                       backgroundColor: COLOURS[0] }]
        },
        options: { responsive: true, maintainAspectRatio: false, animation: false, indexAxis: "y",
                   plugins: { legend: { display: false } },
                   scales: { x: { beginAtZero: true, ticks: { precision: 0 } } } }
      });
    }
    root.setAttribute("data-drawn", "true");
  }

  function start() {
    var root = document.querySelector("[data-overview-src]");
    if (!root) return;
    fetch(root.getAttribute("data-overview-src"), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { if (!response.ok) throw new Error("overview data: " + response.status); return response.json(); })
      .then(function (data) { draw(root, data); })
      .catch(function (error) { root.setAttribute("data-drawn", "failed"); console.error(error); });
  }

  if (document.readyState !== "loading") start();
  else document.addEventListener("DOMContentLoaded", start);
})();
