/* The Graph page's drawing: the vendored Cytoscape.js over the page's JSON endpoint
   (data-graph-src). Selecting a link opens the evidence behind it (data-relation-url, with the
   relation's id in place of the zero UUID). A static file: the CSP allows no inline script. The
   table below the drawing lists the same relations with their links, for keyboards and readers. */
(function () {
  "use strict";

  var ZERO = "00000000-0000-0000-0000-000000000000";

  function draw(box, data) {
    if (typeof window.cytoscape === "undefined") return;
    var elements = [];
    data.nodes.forEach(function (node) {
      elements.push({ group: "nodes", data: { id: node.id, label: node.name, type: node.type } });
    });
    data.edges.forEach(function (edge) {
      elements.push({ group: "edges", data: { id: edge.id, source: edge.source, target: edge.target, label: edge.label } });
    });
    var graph = window.cytoscape({
      container: box,
      elements: elements,
      layout: { name: "cose", animate: false, randomize: false, nodeDimensionsIncludeLabels: true },
      wheelSensitivity: 0.3,
      style: [
        { selector: "node", style: { label: "data(label)", "background-color": "#2557a7", color: "#1a1a1a",
                                      "font-size": 12, "text-valign": "bottom", "text-margin-y": 4 } },
        { selector: "edge", style: { label: "data(label)", width: 2, "line-color": "#8a8f98",
                                      "target-arrow-color": "#8a8f98", "target-arrow-shape": "triangle",
                                      "curve-style": "bezier", "font-size": 10, color: "#444",
                                      "text-background-color": "#fff", "text-background-opacity": 1 } },
        { selector: "edge:selected", style: { "line-color": "#b3541e", "target-arrow-color": "#b3541e", width: 3 } }
      ]
    });
    var url = box.getAttribute("data-relation-url");
    graph.on("tap", "edge", function (event) {
      window.location.assign(url.replace(ZERO, event.target.id()));
    });
    box.setAttribute("data-drawn", String(data.edges.length));
  }

  function start() {
    var box = document.querySelector("[data-graph-src]");
    if (!box) return;
    fetch(box.getAttribute("data-graph-src"), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { if (!response.ok) throw new Error("graph data: " + response.status); return response.json(); })
      .then(function (data) { draw(box, data); })
      .catch(function (error) { box.setAttribute("data-drawn", "failed"); console.error(error); });
  }

  if (document.readyState !== "loading") start();
  else document.addEventListener("DOMContentLoaded", start);
})();
