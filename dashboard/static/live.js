// Live refresh for the jobgen dashboard. Every data-refresh ms (set on
// <body> by the server; 0 means off) it fetches the page again and swaps
// in the elements marked data-live, matched by id. Nothing else on the
// page changes, so forms being filled in keep their state. Pages work
// without this script; it only saves reloading them.
(function () {
  "use strict";

  function refreshEvery() {
    return parseInt(document.body.getAttribute("data-refresh") || "0", 10);
  }

  var busy = false;
  var timer = null;

  function tick() {
    if (busy || document.visibilityState === "hidden") {
      return;
    }
    busy = true;
    fetch(window.location.href, { credentials: "same-origin", headers: { "X-Dashboard-Live": "1" } })
      .then(function (res) {
        if (!res.ok) {
          throw new Error(res.status);
        }
        return res.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var live = document.querySelectorAll("[data-live][id]");
        for (var i = 0; i < live.length; i++) {
          var fresh = doc.getElementById(live[i].id);
          if (fresh && fresh.innerHTML !== live[i].innerHTML) {
            live[i].innerHTML = fresh.innerHTML;
          }
        }
        document.documentElement.setAttribute("data-refreshed", String(Date.now()));
        if (parseInt(doc.body.getAttribute("data-refresh") || "0", 10) === 0) {
          stop();
        }
      })
      .catch(function () {
        document.documentElement.setAttribute("data-refresh-error", "1");
      })
      .then(function () {
        busy = false;
      });
  }

  function stop() {
    if (timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  }

  function selectAll() {
    var all = document.getElementById("select-all");
    if (!all) {
      return;
    }
    all.addEventListener("change", function () {
      var boxes = document.querySelectorAll('input[type=checkbox][name=job]');
      for (var i = 0; i < boxes.length; i++) {
        boxes[i].checked = all.checked;
      }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    selectAll();
    var every = refreshEvery();
    if (every > 0) {
      timer = setInterval(tick, every);
    }
  });
})();
