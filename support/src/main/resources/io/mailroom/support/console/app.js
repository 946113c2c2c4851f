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

  function localTimes() {
    if (!fmt) { return; }
    var times = document.querySelectorAll('time[datetime]');
    for (var i = 0; i < times.length; i++) {
      var t = times[i];
      var d = new Date(t.getAttribute('datetime'));
      if (!isNaN(d.getTime())) {
        t.title = t.textContent; // the UTC text stays available on hover
        t.textContent = fmt.format(d);
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
      if (question && !window.confirm(question)) {
        ev.preventDefault();
      }
    });
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', localTimes);
  } else {
    localTimes();
  }
  confirmations();
})();
