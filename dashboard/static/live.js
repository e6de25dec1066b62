// Live refresh for the jobgen dashboard. Every data-refresh ms (set on
// <body> by the server; 0 means off) it fetches the page again and swaps
// in the elements marked data-live, matched by id. Nothing else on the
// page changes, so forms being filled in keep their state. The server
// leaves the lists that are not live out of a refresh, and answers 304
// when the page is as it was (the ETag of the last one). When a refresh
// fails, a banner says Redis is unreachable and since when; the next
// refresh that works takes it away. Pages work without this script; it
// only saves reloading them.
(function () {
  "use strict";

  function refreshEvery() {
    return parseInt(document.body.getAttribute("data-refresh") || "0", 10);
  }

  var busy = false;
  var timer = null;
  var etag = null;
  var downSince = null;

  function down() {
    var banner = document.getElementById("redis-down");
    if (!banner) {
      return;
    }
    if (downSince === null) {
      downSince = new Date();
      var since = document.getElementById("redis-down-since");
      since.textContent = downSince.toLocaleTimeString();
      since.setAttribute("datetime", downSince.toISOString());
    }
    banner.hidden = false;
    document.documentElement.setAttribute("data-refresh-error", "1");
  }

  function up() {
    downSince = null;
    var banner = document.getElementById("redis-down");
    if (banner) {
      banner.hidden = true;
    }
    document.documentElement.removeAttribute("data-refresh-error");
  }

  function tick() {
    if (busy || document.visibilityState === "hidden") {
      return;
    }
    busy = true;
    var headers = { "X-Dashboard-Live": "1" };
    if (etag !== null) {
      headers["If-None-Match"] = etag;
    }
    fetch(window.location.href, { credentials: "same-origin", cache: "no-store", headers: headers })
      .then(function (res) {
        if (res.status === 304) {
          return null;
        }
        // A 404 is the page's news (the job is gone), not an outage.
        if (!res.ok && res.status !== 404) {
          throw new Error(res.status);
        }
        etag = res.headers.get("ETag");
        return res.text();
      })
      .then(function (html) {
        up();
        if (html === null) {
          document.documentElement.setAttribute("data-refreshed", String(Date.now()));
          return;
        }
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
        down();
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
