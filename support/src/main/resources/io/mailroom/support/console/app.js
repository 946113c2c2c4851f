// Mailroom support console: small progressive enhancements; every page works without this file.
(function () {
  'use strict';
  var fmt;
  try {
    fmt = new Intl.DateTimeFormat(undefined, {
      year: 'numeric', month: 'short', day: 'numeric',
      hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short'
    });
  } catch (e) {
    fmt = null;
  }
  // true while a confirm() question is open, and once a form has been sent: no live part is swapped then
  var asking = false;
  var leaving = false;

  function localTimes() {
    if (!fmt) { return; }
    var times = document.querySelectorAll('time[datetime]:not([data-local])');
    for (var i = 0; i < times.length; i++) {
      var t = times[i];
      var d = new Date(t.getAttribute('datetime'));
      if (!isNaN(d.getTime())) {
        t.title = t.textContent; // the UTC text stays available on hover
        t.textContent = fmt.format(d);
        t.setAttribute('data-local', '');
      }
    }
    var tz = document.getElementById('tz');
    if (tz) {
      var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
      tz.textContent = 'your time zone' + (zone ? ' (' + zone + ')' : '');
    }
  }

  function confirmations() {
    document.addEventListener('submit', function (ev) {
      var button = ev.submitter || ev.target.querySelector('button[data-confirm]');
      var question = button && button.getAttribute('data-confirm');
      if (question) {
        asking = true;
        try {
          if (!window.confirm(question)) {
            ev.preventDefault();
          }
        } finally {
          asking = false;
        }
      }
      if (!ev.defaultPrevented) {
        leaving = true;
      }
    });
  }

  // Live parts: every element with data-live and an id is fetched again every few seconds (the same
  // URL, with the header X-Mailroom-Refresh: 1) and replaced by its new version. Paused while the tab
  // is hidden (and refreshed at once when it shows again), by the person's toggle (remembered), while
  // they type in a field or answer a question, and for a part whose fields they have changed. A 401
  // means the session ended: refreshing stops and the page says so. sessionStorage
  // 'mailroom.refreshSeconds' sets another period (tests).
  function live() {
    if (!document.querySelector('[data-live][id]') || !window.fetch || !window.DOMParser) { return; }
    var every = 10000;
    try {
      var s = parseFloat(window.sessionStorage.getItem('mailroom.refreshSeconds'));
      if (s >= 0.5) { every = s * 1000; }
    } catch (e) { /* storage unavailable: the default */ }
    var paused = false;
    try { paused = window.localStorage.getItem('mailroom.live') === 'paused'; } catch (e) { /* not remembered */ }
    var ended = false;
    var timer = null;
    var inFlight = false;
    var refreshes = 0;
    var updated = new Date();
    var problem = null;

    var bar = document.createElement('div');
    bar.className = 'live';
    bar.id = 'live-status';
    var text = document.createElement('span');
    text.id = 'live-updated';
    var toggle = document.createElement('button');
    toggle.type = 'button';
    toggle.className = 'secondary';
    toggle.id = 'live-toggle';
    bar.appendChild(text);
    bar.appendChild(toggle);
    var heading = document.querySelector('main h1');
    if (heading) {
      heading.parentNode.insertBefore(bar, heading.nextSibling);
    } else {
      document.querySelector('[data-live][id]').parentNode.insertBefore(bar, document.querySelector('[data-live][id]'));
    }

    function two(n) { return (n < 10 ? '0' : '') + n; }

    function show() {
      var state = ended ? 'ended' : paused ? 'paused' : document.hidden ? 'hidden' : 'running';
      document.documentElement.setAttribute('data-live-state', state);
      document.documentElement.setAttribute('data-live-refreshes', String(refreshes));
      if (ended) { return; }
      toggle.textContent = paused ? 'Resume live updates' : 'Pause live updates';
      toggle.setAttribute('aria-pressed', paused ? 'true' : 'false');
      text.textContent = 'Updated ' + two(updated.getHours()) + ':' + two(updated.getMinutes()) + ':' + two(updated.getSeconds())
          + (paused ? ' · live updates paused' : '') + (problem ? ' · ' + problem : '');
    }

    function stop() {
      if (timer !== null) { clearTimeout(timer); timer = null; }
    }

    function schedule() {
      stop();
      if (!ended && !paused && !document.hidden && !leaving) {
        timer = setTimeout(tick, every);
      }
      show();
    }

    function typing() {
      var a = document.activeElement;
      return !!a && a !== document.body && a.matches('input, textarea, select, [contenteditable]');
    }

    function changed(region) {
      var fields = region.querySelectorAll('input, textarea, select');
      for (var i = 0; i < fields.length; i++) {
        var f = fields[i];
        if (f.type === 'hidden') { continue; }
        if (f.tagName === 'SELECT') {
          for (var j = 0; j < f.options.length; j++) {
            if (f.options[j].selected !== f.options[j].defaultSelected) { return true; }
          }
        } else if (f.type === 'checkbox' || f.type === 'radio') {
          if (f.checked !== f.defaultChecked) { return true; }
        } else if (f.value !== f.defaultValue) {
          return true;
        }
      }
      return false;
    }

    function quiet() {
      return ended || paused || document.hidden || leaving || asking || typing();
    }

    function swap(html) {
      var doc = new DOMParser().parseFromString(html, 'text/html');
      var regions = document.querySelectorAll('[data-live][id]');
      for (var i = 0; i < regions.length; i++) {
        var fresh = doc.getElementById(regions[i].id);
        if (fresh && fresh.hasAttribute('data-live') && !changed(regions[i])) {
          regions[i].replaceWith(document.adoptNode(fresh));
        }
      }
      localTimes();
      refreshes++;
      updated = new Date();
      problem = null;
    }

    function end() {
      ended = true;
      stop();
      bar.classList.add('ended');
      bar.textContent = 'Your session has ended, so live updates stopped. ';
      var link = document.createElement('a');
      link.href = '/console/login?next=' + encodeURIComponent(location.pathname + location.search);
      link.textContent = 'Sign in again';
      bar.appendChild(link);
      show();
    }

    function tick() {
      timer = null;
      if (inFlight) { return; }
      if (quiet()) { schedule(); return; }
      inFlight = true;
      fetch(location.pathname + location.search, {
        headers: { 'X-Mailroom-Refresh': '1' }, credentials: 'same-origin', cache: 'no-store', redirect: 'manual'
      }).then(function (r) {
        if (r.status === 401 || r.type === 'opaqueredirect') {
          end();
          return null;
        }
        if (!r.ok) {
          problem = 'could not update (' + r.status + '), trying again';
          return null;
        }
        return r.text().then(function (html) {
          if (!quiet()) { swap(html); }
        });
      }).catch(function () {
        problem = 'the server did not answer, trying again';
      }).then(function () {
        inFlight = false;
        if (!ended) { schedule(); }
      });
    }

    toggle.addEventListener('click', function () {
      paused = !paused;
      try { window.localStorage.setItem('mailroom.live', paused ? 'paused' : 'running'); } catch (e) { /* not remembered */ }
      if (paused) { stop(); show(); } else { tick(); }
    });
    document.addEventListener('visibilitychange', function () {
      if (document.hidden) {
        stop();
        show();
      } else if (!paused && !ended) {
        stop();
        tick(); // back in view: fresh numbers at once
      }
    });
    window.addEventListener('pagehide', function () { leaving = true; stop(); });
    schedule();
  }

  function start() {
    localTimes();
    live();
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
  confirmations();
})();
