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

  // skew is the server's clock less this one's, from the last response:
  // the times on the page are read against the server's clock.
  var skew = 0;

  // dur writes ms as the server does (render.go, duration).
  function dur(ms) {
    if (ms < 0) {
      ms = 0;
    }
    var s = Math.floor(ms / 1000), m = Math.floor(s / 60), h = Math.floor(m / 60);
    if (ms < 1000) {
      return Math.floor(ms) + "ms";
    }
    if (s < 60) {
      return s + "s";
    }
    if (m < 60) {
      return s % 60 === 0 ? m + "m" : m + "m " + (s % 60) + "s";
    }
    if (h < 48) {
      return h + "h " + (m % 60) + "m";
    }
    return Math.floor(h / 24) + "d";
  }

  // moveTimes brings the texts of the <time data-ago|when|left> elements
  // to now: a refresh answered 304 leaves them as they were sent.
  function moveTimes() {
    var now = Date.now() + skew;
    var times = document.querySelectorAll("time[data-ago],time[data-when],time[data-left]");
    for (var i = 0; i < times.length; i++) {
      var t = times[i], text;
      if (t.hasAttribute("data-ago")) {
        text = dur(now - parseInt(t.getAttribute("data-ago"), 10));
      } else if (t.hasAttribute("data-left")) {
        text = dur(parseInt(t.getAttribute("data-left"), 10) - now);
      } else {
        var d = parseInt(t.getAttribute("data-when"), 10) - now;
        text = d >= 0 ? "in " + dur(d) : dur(-d) + " ago";
      }
      if (t.textContent !== text) {
        t.textContent = text;
      }
    }
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
        var serverNow = parseInt(res.headers.get("X-Dashboard-Now") || "", 10);
        if (!isNaN(serverNow)) {
          skew = serverNow - Date.now();
        }
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
          moveTimes();
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
        moveTimes();
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
