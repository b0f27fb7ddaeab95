/* Deep Recall dashboard behaviour, loaded as a file so a CSP without inline scripts holds.
 *
 * - form[data-confirm]: ask before a destructive submit, then mark the form confirmed
 *   (the server shows its own confirmation page when a form arrives unconfirmed);
 * - button[data-copy]: copy the text of another element to the clipboard;
 * - [data-job-api]: poll GET /api/v1/jobs/{id} with the session until the job ends,
 *   then list the memories it produced;
 * - [data-refresh-while-running]: re-fetch this page's region while jobs run;
 * - header[data-menu]: on a narrow screen, fold the menus behind a "Menu" button;
 * - a form sent back with errors: focus its first invalid field, so keyboard and
 *   screen-reader users start where the problem is.
 * Every page works without it; it only saves a reload or a click.
 */
(function () {
  "use strict";

  function onReady(fn) {
    if (document.readyState !== "loading") fn();
    else document.addEventListener("DOMContentLoaded", fn);
  }

  function setupConfirms() {
    document.querySelectorAll("form[data-confirm]").forEach(function (form) {
      form.addEventListener("submit", function (event) {
        if (!window.confirm(form.getAttribute("data-confirm"))) {
          event.preventDefault();
          return;
        }
        var field = form.querySelector('input[name="confirmed"]');
        if (field) field.value = "yes";
      });
    });
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    return new Promise(function (resolve, reject) {
      var area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.className = "visually-hidden";
      document.body.appendChild(area);
      area.select();
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      document.body.removeChild(area);
      if (ok) resolve(); else reject(new Error("copy refused"));
    });
  }

  function setupCopy() {
    document.querySelectorAll("button[data-copy]").forEach(function (button) {
      var source = document.getElementById(button.getAttribute("data-copy"));
      var status = document.getElementById(button.getAttribute("data-copy-status"));
      if (!source) return;
      button.hidden = false;
      button.addEventListener("click", function () {
        var text = source.tagName === "TEXTAREA" || source.tagName === "INPUT" ? source.value : source.textContent;
        copyText(text).then(
          function () { if (status) status.textContent = "Copied to the clipboard."; },
          function () { if (status) status.textContent = "Could not copy: select the text and press Ctrl+C."; }
        );
      });
    });
  }

  var FINISHED = { succeeded: true, failed: true };
  // The words people read for memory kinds (memories/dashboard/words.py).
  var KIND_WORDS = { fact: "Fact", episode: "Event", foresight: "Plan" };
  var MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

  // The server's format ("30 Nov 2026, 06:00 UTC") in the person's zone (body[data-time-zone]),
  // so a value does not change look when updated.
  function formatTime(iso) {
    var d = new Date(iso);
    var zone = document.body.getAttribute("data-time-zone") || "UTC";
    try {
      var parts = {};
      new Intl.DateTimeFormat("en-GB", {
        timeZone: zone, day: "numeric", month: "short", year: "numeric",
        hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZoneName: "short"
      }).formatToParts(d).forEach(function (part) { parts[part.type] = part.value; });
      return parts.day + " " + parts.month + " " + parts.year + ", " + parts.hour + ":" + parts.minute +
        " " + parts.timeZoneName;
    } catch (e) {
      function two(n) { return (n < 10 ? "0" : "") + n; }
      return d.getUTCDate() + " " + MONTHS[d.getUTCMonth()] + " " + d.getUTCFullYear() + ", " +
        two(d.getUTCHours()) + ":" + two(d.getUTCMinutes()) + " UTC";
    }
  }

  function showFields(box, job) {
    box.querySelectorAll("[data-job-field]").forEach(function (cell) {
      var value = job[cell.getAttribute("data-job-field")];
      if (value === null || value === undefined) { cell.textContent = "—"; return; }
      if (typeof value === "number") { cell.textContent = String(value); return; }
      var time = document.createElement("time");
      time.dateTime = value;
      time.textContent = formatTime(value);
      cell.replaceChildren(time);
    });
  }

  function renderMemories(list, memories, urlTemplate, placeholder) {
    list.replaceChildren();
    memories.forEach(function (memory) {
      var item = document.createElement("li");
      var content = document.createElement("p");
      content.className = "content";
      var link = document.createElement("a");
      link.href = urlTemplate.replace(placeholder, memory.id);
      link.textContent = memory.content;
      content.appendChild(link);
      var meta = document.createElement("ul");
      meta.className = "meta";
      var kind = document.createElement("li");
      var badge = document.createElement("span");
      badge.className = "badge " + memory.kind;
      badge.textContent = KIND_WORDS[memory.kind] || memory.kind;
      kind.appendChild(badge);
      meta.appendChild(kind);
      (memory.tags || []).forEach(function (tag) {
        var li = document.createElement("li");
        var span = document.createElement("span");
        span.className = "tag";
        span.textContent = tag;
        li.appendChild(span);
        meta.appendChild(li);
      });
      item.appendChild(content);
      item.appendChild(meta);
      list.appendChild(item);
    });
  }

  // The import page: the bar and counts follow GET /api/v1/imports/{id} until the import stops; then
  // the page is loaded again, and the server shows the result (the reasons items were skipped, what
  // an export restored, an error, the actions left) in the words it has for them.
  function setupImport() {
    var box = document.querySelector("[data-import-api]");
    if (!box || box.getAttribute("data-import-done") === "true") return;
    var api = box.getAttribute("data-import-api");
    var bar = box.querySelector("[data-import-bar]");
    var statusText = box.querySelector("[data-import-status]");
    var badge = box.querySelector("[data-import-badge]");
    function show(made) {
      var items = made.items;
      bar.max = Math.max(items.total, 1);
      bar.value = items.read;
      statusText.textContent = items.read + " of " + items.total + " items read: " + items.stored +
        " stored, " + items.skipped + " skipped, " + items.failed + " failed.";
      badge.textContent = made.status;
      badge.className = "badge " + made.status;
      if (made.status === "queued" || made.status === "running") return false;
      window.location.reload();
      return true;
    }
    pollUntil(api, function (body) { return show(body["import"]); }, function () {});
  }

  // GET `api` (JSON) and hand the body to `show` until it answers true, backing off from 300 ms to
  // 2 s; a failed request calls `failed` and is tried again 3 s later.
  function pollUntil(api, show, failed) {
    var delay = 300;
    function poll() {
      fetch(api, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (response) {
          if (!response.ok) throw new Error("HTTP " + response.status);
          return response.json();
        })
        .then(function (body) {
          if (!show(body)) {
            delay = Math.min(delay * 1.5, 2000);
            window.setTimeout(poll, delay);
          }
        })
        .catch(function () {
          failed();
          window.setTimeout(poll, 3000);
        });
    }
    window.setTimeout(poll, delay);
  }

  function setupJob() {
    var box = document.querySelector("[data-job-api]");
    if (!box || box.getAttribute("data-job-done") === "true") return;
    var api = box.getAttribute("data-job-api");
    var statusText = box.querySelector("[data-job-status]");
    var badge = box.querySelector("[data-job-badge]");
    var bar = box.querySelector("progress");
    var results = document.querySelector("[data-job-results]");
    var list = document.querySelector("[data-job-memories]");
    var count = document.querySelector("[data-job-count]");
    var errorBox = document.querySelector("[data-job-error]");
    var urlTemplate = box.getAttribute("data-memory-url");
    var placeholder = box.getAttribute("data-memory-placeholder");
    var stages = box.querySelector("[data-job-stages]");
    var segments = box.querySelector("[data-job-segments]");

    // The stage and the share of segments done, as the worker last wrote them (job.progress).
    function showProgress(progress, finished) {
      if (stages) {
        stages.setAttribute("data-stage", progress.stage);
        var passed = true;
        stages.querySelectorAll("li[data-stage]").forEach(function (item) {
          var current = item.getAttribute("data-stage") === progress.stage;
          if (current) { item.setAttribute("aria-current", "step"); passed = false; }
          else item.removeAttribute("aria-current");
          item.classList.toggle("passed", passed && !current);
        });
      }
      if (progress.total) {
        if (segments) {
          segments.textContent = progress.done + " of " + progress.total + " segment" +
            (progress.total === 1 ? "" : "s") + " embedded";
        }
        if (bar && !finished) { bar.max = progress.total; bar.value = progress.done; }
      }
    }

    function show(job) {
      showFields(box, job);
      if (job.progress) showProgress(job.progress, FINISHED[job.status]);
      if (badge) {
        badge.textContent = job.status;
        badge.className = "badge " + job.status;
      }
      if (!FINISHED[job.status]) {
        statusText.textContent = job.status === "running" ? "Reading and extracting memories…" : "Waiting for a worker…";
        return false;
      }
      box.setAttribute("data-job-done", "true");
      if (bar) { bar.max = 1; bar.value = 1; }
      if (job.status === "succeeded") {
        var n = (job.memories || []).length;
        statusText.textContent = "Done: " + n + (n === 1 ? " memory." : " memories.");
        if (count) count.textContent = String(n);
        if (list) renderMemories(list, job.memories || [], urlTemplate, placeholder);
        if (results) results.hidden = false;
      } else {
        statusText.textContent = "Failed.";
        if (errorBox) {
          errorBox.textContent = job.error ? job.error.message + " (" + job.error.code + ")" : "The job failed.";
          errorBox.hidden = false;
        }
      }
      return true;
    }

    pollUntil(api, show, function () { statusText.textContent = "Could not check the job; retrying…"; });
  }

  function setupRefresh() {
    var region = document.querySelector("[data-refresh-while-running]");
    if (!region || region.getAttribute("data-running") === "0") return;
    function refresh() {
      fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
        .then(function (response) { return response.text(); })
        .then(function (html) {
          var fresh = new DOMParser().parseFromString(html, "text/html").querySelector("[data-refresh-while-running]");
          if (!fresh) return;
          region.replaceChildren.apply(region, Array.prototype.map.call(fresh.childNodes, function (node) {
            return document.importNode(node, true);
          }));
          region.setAttribute("data-running", fresh.getAttribute("data-running"));
          if (fresh.getAttribute("data-running") !== "0") window.setTimeout(refresh, 1500);
        })
        .catch(function () { window.setTimeout(refresh, 5000); });
    }
    window.setTimeout(refresh, 1500);
  }

  // The skip link moves focus into <main> without adding "#main" to the address: a form
  // posted from a page whose address has a fragment keeps it, and the browser would then
  // move focus to <main> after load, away from the first invalid field.
  function setupSkipLink() {
    var link = document.querySelector("a.skip-link");
    var main = document.getElementById("main");
    if (!link || !main) return;
    link.addEventListener("click", function (event) {
      event.preventDefault();
      main.setAttribute("tabindex", "-1");
      main.focus();
    });
    main.addEventListener("blur", function () { main.removeAttribute("tabindex"); });
  }

  // The narrow-screen menu: the header folds its menus behind one button (a wide screen, or no
  // script, shows them all).
  function setupMenu() {
    var header = document.querySelector("header[data-menu]");
    var button = header && header.querySelector(".menu-toggle");
    if (!header || !button) return;
    header.classList.add("menu-ready");
    button.hidden = false;
    button.addEventListener("click", function () {
      var open = header.classList.toggle("menu-open");
      button.setAttribute("aria-expanded", open ? "true" : "false");
    });
  }

  function focusFirstError() {
    var invalid = document.querySelector('main [aria-invalid="true"]');
    if (invalid) invalid.focus();
  }

  onReady(function () {
    setupSkipLink();
    setupMenu();
    focusFirstError();
    setupConfirms();
    setupCopy();
    setupJob();
    setupImport();
    setupRefresh();
  });
})();
